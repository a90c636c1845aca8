import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { publishStoreRefund, storeRefund } from '../../support/store-refund.js';
import { patchMe } from '../../../services/chests/test/support/compliance.js';
import {
  appIdOf,
  defaultCatalogIds,
  grantChests,
  inventory,
  open,
  purchase,
  registerPlayer,
  sql,
  studioGrant,
  waitForStarterChest,
  type Player,
} from '../../../services/chests/test/support/chests.js';

interface CurrencyResource {
  id: string;
  attributes: { code: string; balance?: { amount: string } };
  meta?: { debt?: string };
}

// A store refund through the running stack: the refund message as the store publishes it, the
// wallet taking the currency back below zero (a debt), GET /currencies showing it, every spend of
// that currency refused by chests with the wallet's 403 currency_in_debt, and credits lifting it.
describe('store refunds and debts (grants.store.refund, 403 currency_in_debt)', () => {
  let stack: TestStack;
  let appId: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    stack = await startStack();
    appId = await appIdOf(stack);
    ids = await defaultCatalogIds(stack);
  });
  afterAll(async () => stack?.close());

  /** A registered player whose welcome credits (1500 coins, 15 gems) and starter chest have landed. */
  async function newPlayer(): Promise<Player> {
    const p = await registerPlayer(stack);
    await waitForStarterChest(stack, p);
    await eventually(async () => expect((await currencies(p)).coins!.attributes.balance?.amount).toBe('1500.00'));
    return p;
  }

  /** GET /api/v1/currencies as the player: each currency by code, the document checked as JSON:API. */
  async function currencies(p?: Player): Promise<Record<string, CurrencyResource>> {
    const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: jsonApiHeaders(stack.apiKey, p?.token) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    return Object.fromEntries((body.data as CurrencyResource[]).map((c) => [c.attributes.code, c]));
  }

  /** Applies a refund of `amounts` (code → amount) to the player, as the store would, and waits for the wallet. */
  async function refund(p: Player, amounts: Record<string, string>) {
    const r = storeRefund(appId, p.id, amounts);
    expect(await publishStoreRefund(stack, r)).toEqual({ duplicate: false, applied: true });
    return r;
  }

  /** POST /api/v1/currencies/{id}/credit: the balance it answers. */
  async function credit(p: Player, currencyId: string, amount: string): Promise<string> {
    const res = await stack.inject({
      method: 'POST',
      url: `/api/v1/currencies/${currencyId}/credit`,
      headers: { apikey: stack.apiKey, authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
      payload: { amount },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.balance.amount;
  }

  /** What a refused spend may not change: the player's ledger, chests and payments. */
  const snapshot = async (p: Player) => ({
    ledger: await sql(stack, 'SELECT id FROM wallet.ledger WHERE player_id = $1 ORDER BY id', [p.id]),
    chests: await sql(stack, 'SELECT id, opened_at, unlocks_at FROM chests.inventory_chests WHERE player_id = $1 ORDER BY id', [p.id]),
    paid: await sql(stack, "SELECT id FROM chests.payments WHERE player_id = $1 AND status <> 'failed'", [p.id]),
  });

  const expectInDebt = (res: Awaited<ReturnType<typeof purchase>>, currency: string, debt: string) => {
    const [error] = expectError(res, 403, 'currency_in_debt') as unknown as { meta: unknown; detail: string }[];
    expect(error!.meta).toEqual({ currency, debt });
    expect(error!.detail).toMatch(/back to zero/);
  };

  it('leaves a debt when the refund is larger than the balance: GET /currencies shows the negative amount and meta.debt', async () => {
    const p = await newPlayer();
    const r = await refund(p, { coins: '1800' });
    const listed = await currencies(p);
    expect(listed.coins).toMatchObject({ attributes: { balance: { amount: '-300.00' } }, meta: { debt: '300.00' } });
    expect(listed.gems!.attributes.balance!.amount).toBe('15.00');
    expect(listed.gems).not.toHaveProperty('meta');
    // Without a token there is no balance, and so no debt.
    for (const c of Object.values(await currencies())) expect(c).not.toHaveProperty('meta');
    expect(
      await sql(stack, 'SELECT delta::text, balance_after::text, reason FROM wallet.ledger WHERE player_id = $1 AND reference = $2', [
        p.id,
        `store-refund:${r.refundId}`,
      ]),
    ).toEqual([{ delta: '-1800.00', balance_after: '-300.00', reason: 'store_refund' }]);
  });

  it('refuses a purchase, a banner pull, a key and a timer skip in an owed currency with 403 currency_in_debt: nothing debited, no chest', async () => {
    const p = await newPlayer();
    // Gems are a paid currency: the skip passes the compliance gate first (an allowed country and age).
    expect((await patchMe(stack, p, { country: 'DE', birth_year: 1990 })).statusCode).toBe(200);
    const [vault] = await grantChests(stack, p, 'vault-chest', 1);
    const [hourglass] = await grantChests(stack, p, 'hourglass-chest', 1);
    await refund(p, { coins: '1800', gems: '20', vault_key: '1' });
    const before = await snapshot(p);

    expectInDebt(await purchase(stack, p, ids['Wooden Chest']!, 'coins'), 'coins', '300.00');
    const pull = await stack.inject({
      method: 'POST',
      url: '/api/v1/banners/kraken-rising/pull',
      headers: jsonApiHeaders(stack.apiKey, p.token),
      payload: { data: { type: 'pull', attributes: { count: 1, currency: 'coins' } } },
    });
    expectInDebt(pull, 'coins', '300.00');
    expectInDebt(await open(stack, p, vault!, { method: 'POST' }), 'vault_key', '1.00');
    const skip = await stack.inject({
      method: 'POST',
      url: `/api/v1/chests/${hourglass}/unlock`,
      headers: jsonApiHeaders(stack.apiKey, p.token),
      payload: { data: { type: 'unlock', attributes: { skip_with: 'gems' } } },
    });
    expectInDebt(skip, 'gems', '5.00');

    expect(await snapshot(p)).toEqual(before);
    expect(await sql(stack, 'SELECT kind, status, failure FROM chests.payments WHERE player_id = $1 ORDER BY kind', [p.id])).toEqual([
      { kind: 'key', status: 'failed', failure: 'currency_in_debt' },
      { kind: 'purchase', status: 'failed', failure: 'currency_in_debt' },
      { kind: 'purchase', status: 'failed', failure: 'currency_in_debt' },
      { kind: 'skip', status: 'failed', failure: 'currency_in_debt' },
    ]);
    const listed = await currencies(p);
    expect(Object.fromEntries(Object.entries(listed).map(([code, c]) => [code, [c.attributes.balance?.amount, c.meta?.debt]]))).toEqual({
      coins: ['-300.00', '300.00'],
      gems: ['-5.00', '5.00'],
      vault_key: ['-1.00', '1.00'],
    });
  });

  it('lifts the block once credits cover the debt: a purchase then debits and adds its chest', async () => {
    const p = await newPlayer();
    await refund(p, { coins: '1800' });
    const coins = (await currencies(p)).coins!.id;
    // A credit that covers part of the debt answers the balance still below zero; the spend is still refused.
    expect(await credit(p, coins, '200')).toBe('-100.00');
    expectInDebt(await purchase(stack, p, ids['Wooden Chest']!, 'coins'), 'coins', '100.00');
    // The studio's grant covers the rest; at zero a purchase is only too expensive.
    await studioGrant(stack, p, 'coins', '100');
    expectError(await purchase(stack, p, ids['Wooden Chest']!, 'coins'), 409, 'insufficient_funds');
    expect(await credit(p, coins, '500')).toBe('500.00');
    const bought = await purchase(stack, p, ids['Wooden Chest']!, 'coins');
    expect(bought.statusCode, bought.body).toBe(201);
    expect(bought.json().meta.balance).toEqual({ coins: '0.00' });
    expect((await currencies(p)).coins).not.toHaveProperty('meta');
    expect((await inventory(stack, p)).data).toHaveLength(2);
  });

  it('takes a refund back once when the message comes twice, and gives a reversal back once', async () => {
    const p = await newPlayer();
    const r = await refund(p, { coins: '1800' });
    // The same message again: the stream drops it by its Nats-Msg-Id.
    expect(await publishStoreRefund(stack, r)).toEqual({ duplicate: true, applied: false });
    // The same refund under another message id (a re-publish the stream cannot recognise): applied notice, nothing taken.
    expect(await publishStoreRefund(stack, r, { msgId: randomUUID() })).toEqual({ duplicate: false, applied: true });
    expect((await currencies(p)).coins!.attributes.balance!.amount).toBe('-300.00');

    const reversal = storeRefund(appId, p.id, { coins: '1800' }, { kind: 'reversal', purchaseId: r.purchaseId });
    expect(await publishStoreRefund(stack, reversal)).toEqual({ duplicate: false, applied: true });
    expect(await publishStoreRefund(stack, reversal, { msgId: randomUUID() })).toEqual({ duplicate: false, applied: true });
    expect((await currencies(p)).coins).toMatchObject({ attributes: { balance: { amount: '1500.00' } } });
    expect((await currencies(p)).coins).not.toHaveProperty('meta');
    expect(
      await sql(stack, "SELECT reason, delta::text FROM wallet.ledger WHERE player_id = $1 AND reason LIKE 'store_%' ORDER BY id", [p.id]),
    ).toEqual([
      { reason: 'store_refund', delta: '-1800.00' },
      { reason: 'store_refund_reversed', delta: '1800.00' },
    ]);
  });

  it('loses no update when 20 purchases race a refund: each purchase paid in full with its chest, or refused with nothing', async () => {
    const p = await newPlayer();
    await studioGrant(stack, p, 'coins', '3500');
    const [answers] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, () => purchase(stack, p, ids['Wooden Chest']!, 'coins'))),
      refund(p, { coins: '2000' }),
    ]);
    const paid = answers.filter((a) => a.statusCode === 201);
    for (const a of answers) {
      if (a.statusCode === 201) expect(a.json().data).toHaveLength(1);
      else expect([409, 403], a.body).toContain(a.statusCode);
    }
    for (const a of answers.filter((x) => x.statusCode === 409)) expectError(a, 409, 'insufficient_funds');
    for (const a of answers.filter((x) => x.statusCode === 403)) expectError(a, 403, 'currency_in_debt');
    const expected = (5000 - 500 * paid.length - 2000).toFixed(2);
    expect((await currencies(p)).coins!.attributes.balance!.amount).toBe(expected);
    const [sums] = await sql<{ sum: string; balance: string }>(
      stack,
      `SELECT (SELECT sum(delta)::text FROM wallet.ledger l JOIN wallet.currencies c ON c.id = l.currency_id WHERE l.player_id = $1 AND c.code = 'coins') AS sum,
              (SELECT b.amount::text FROM wallet.balances b JOIN wallet.currencies c ON c.id = b.currency_id WHERE b.player_id = $1 AND c.code = 'coins') AS balance`,
      [p.id],
    );
    expect(sums).toEqual({ sum: expected, balance: expected });
    const purchased = await sql<{ n: number }>(
      stack,
      'SELECT count(*)::int AS n FROM chests.inventory_chests WHERE player_id = $1 AND id <> $2 AND opened_at IS NULL',
      [p.id, p.starterChestId],
    );
    expect(purchased[0]!.n).toBe(paid.length);
    expect(
      await sql(stack, 'SELECT status, count(*)::int AS n FROM chests.payments WHERE player_id = $1 GROUP BY status ORDER BY status', [p.id]),
    ).toEqual([{ status: 'completed', n: paid.length }, ...(paid.length < 20 ? [{ status: 'failed', n: 20 - paid.length }] : [])]);
  }, 60_000);
});
