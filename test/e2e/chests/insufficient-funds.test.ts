import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import {
  defaultCatalogIds,
  grantChests,
  inventory,
  open,
  purchase,
  registerPlayer,
  sql,
  waitForStarterChest,
  wallet,
  type Player,
} from '../../../services/chests/test/support/chests.js';

// A spend the balance does not cover, through the running stack: the wallet's refusal names what
// the spend needs (`meta.required`) and what the player holds (`meta.balance`), in the currency
// (`meta.currency`), on every path that spends (a purchase, a banner pull, a key chest, alone or in
// a batch; the timer skip is test/e2e/chests/time-locked.test.ts), and nothing changes. The demo's
// numbers let a new player pull its banner once with what registration credits.
describe('too low a balance: 409 with what is needed and what is held', () => {
  let stack: TestStack;
  let ids: Record<string, string>;

  beforeAll(async () => {
    stack = await startStack();
    ids = await defaultCatalogIds(stack);
  });
  afterAll(async () => stack?.close());

  /** A registered player whose registration credits (1500 coins, 15 gems) and starter chest have landed. */
  async function newPlayer(): Promise<Player> {
    const p = await registerPlayer(stack);
    await waitForStarterChest(stack, p);
    await eventually(async () => expect((await wallet(stack, p)).coins?.balance).toBe('1500.00'));
    return p;
  }

  const pull = (p: Player, count: number, currency = 'coins') =>
    stack.inject({
      method: 'POST',
      url: '/api/v1/banners/kraken-rising/pull',
      headers: jsonApiHeaders(p.apiKey, p.token),
      payload: { data: { type: 'pull', attributes: { count, currency } } },
    });
  const unopened = async (p: Player) => (await inventory(stack, p)).meta.total_count as number;

  it('lets a new player pull the demo banner once with the registration credits, and the next pull says what it needs', async () => {
    const p = await newPlayer();
    const banner = await stack.inject({ method: 'GET', url: '/api/v1/banners/kraken-rising', headers: jsonApiHeaders(p.apiKey, p.token) });
    expect(banner.statusCode, banner.body).toBe(200);
    expectJsonApi(banner.json());
    const price = banner.json().data.attributes.price_per_pull as Record<string, number>;
    expect(price).toEqual({ coins: 1000, gems: 25 });

    const first = await pull(p, 1);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().meta).toMatchObject({ pulls: 1, price_paid: { coins: price.coins } });
    const held = (await wallet(stack, p)).coins!.balance;
    expect(Number(held)).toBeLessThan(price.coins!);

    const chests = await unopened(p);
    for (const count of [1, 10]) {
      const [refusal] = expectError(await pull(p, count), 409, 'insufficient_funds');
      expect((refusal as { meta?: unknown }).meta).toEqual({ currency: 'coins', required: (count * price.coins!).toFixed(2), balance: held });
      expect(refusal!.detail).toContain(`${(count * price.coins!).toFixed(2)} coins`);
    }
    // Nothing was debited or added.
    expect((await wallet(stack, p)).coins!.balance).toBe(held);
    expect(await unopened(p)).toBe(chests);
  });

  it('refuses a purchase with the price of the whole quantity and the balance', async () => {
    const p = await newPlayer();
    const [refusal] = expectError(await purchase(stack, p, ids['Silver Chest']!, 'coins', 2), 409, 'insufficient_funds');
    expect((refusal as { meta?: unknown }).meta).toEqual({ currency: 'coins', required: '3000.00', balance: '1500.00' });
    expect(refusal!.detail).toBe('This needs 3000.00 coins, and the balance is 1500.00 coins.');
    expect((await wallet(stack, p)).coins!.balance).toBe('1500.00');
  });

  it('refuses a key chest without its key with the key and the balance of its currency, alone and pointed at in a batch', async () => {
    const p = await newPlayer();
    const [vault] = await grantChests(stack, p, 'vault-chest', 1);
    const figures = { currency: 'vault_key', amount: 1, required: '1.00', balance: '0.00' };
    const [alone] = expectError(await open(stack, p, vault!, { method: 'POST' }), 409, 'key_required');
    expect((alone as { meta?: unknown }).meta).toEqual(figures);

    const batch = await stack.inject({
      method: 'POST',
      url: '/api/v1/chests/open',
      headers: jsonApiHeaders(p.apiKey, p.token),
      payload: { data: [p.starterChestId, vault].map((id) => ({ type: 'chest', id })) },
    });
    const [pointed] = expectError(batch, 409, 'key_required');
    expect(pointed).toMatchObject({ source: { pointer: '/data/1/id' }, meta: figures });
    const openedRows = await sql<{ n: number }>(
      stack,
      'SELECT count(*)::int AS n FROM chests.inventory_chests WHERE id = ANY($1::uuid[]) AND opened_at IS NOT NULL',
      [[p.starterChestId, vault]],
    );
    expect(openedRows[0]!.n).toBe(0);
  });
});
