import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { chestTypeId } from '@ccs/shared';
import { patchMe } from '../../../services/chests/test/support/compliance.js';
import {
  appIdOf,
  credit,
  inventory,
  purchase,
  registerPlayer,
  sql,
  waitForStarterChest,
  wallet,
  defaultCatalogIds,
  type Player,
} from '../../../services/chests/test/support/chests.js';

// Buying chests through the gateway: the purchase as rendered, with gems, the gateway's validation
// and idempotency headers, and the real wallet under concurrent purchases. Refusals, capacity,
// compensation and the sweeper are chests' own (services/chests/test/purchase.test.ts, service tier).
describe('buying chests', () => {
  let stack: TestStack;
  let appId: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    stack = await startStack({ env: { PURCHASE_SWEEP_INTERVAL_MS: '200', PURCHASE_STALE_MS: '1500' } });
    appId = await appIdOf(stack);
    ids = await defaultCatalogIds(stack);
  });
  afterAll(async () => stack?.close());

  /** A registered player whose welcome credits (1500 coins, 15 gems) and starter chest have landed. */
  async function newPlayer(apiKey = stack.apiKey): Promise<Player> {
    const p = await registerPlayer(stack, apiKey);
    await waitForStarterChest(stack, p);
    await eventually(async () => expect((await wallet(stack, p)).coins?.balance).toBe('1500.00'));
    return p;
  }

  it('debits the price and adds the chests: 201 with the new inventory chests', async () => {
    const p = await newPlayer();
    const coins = (await wallet(stack, p)).coins!;
    await credit(stack, p, coins.id, '1500');
    const res = await purchase(stack, p, ids['Silver Chest']!, 'coins', 2);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expectJsonApi(body);
    expect(body.data).toHaveLength(2);
    for (const chest of body.data) {
      expect(chest).toMatchObject({
        type: 'chest',
        attributes: { name: 'Silver Chest' },
        relationships: {},
        meta: { source: 'purchased', chest_type_id: chestTypeId(appId, 'silver-chest') },
      });
    }
    expect(body.meta).toEqual({ purchase_id: expect.any(String), price_paid: { coins: 3000 }, balance: { coins: '0.00' } });
    expect((await wallet(stack, p)).coins!.balance).toBe('0.00');
    const inv = await inventory(stack, p);
    expect(inv.meta.chest_types).toEqual({ purchased: 2, earned: 0, welcome: 1, special: 0 });
    expect(inv.meta.estimated_value).toEqual({ coins: 500 + 2 * 1500, gems: 2 * 15, vault_key: 0 });
    const ledger = await sql<{ delta: string; reason: string }>(stack, 'SELECT delta, reason FROM wallet.ledger WHERE reference = $1', [
      body.meta.purchase_id,
    ]);
    expect(ledger).toEqual([{ delta: '-3000.00', reason: 'debit' }]);
    expect(await sql(stack, "SELECT status FROM chests.payments WHERE kind = 'purchase' AND id = $1", [body.meta.purchase_id])).toEqual([
      { status: 'completed' },
    ]);
  });

  it('buys one chest by default, with gems too; the chest opens at once', async () => {
    const p = await newPlayer();
    // Gems are a paid currency of the demo content: the player declares an allowed country and age (compliance.test.ts).
    expect((await patchMe(stack, p, { country: 'DE', birth_year: 1990 })).statusCode).toBe(200);
    const res = await purchase(stack, p, ids['Silver Chest']!, 'gems');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toHaveLength(1);
    expect(res.json().meta.balance).toEqual({ gems: '0.00' });
    const opened = await stack.inject({
      method: 'GET',
      url: `/api/v1/chests/${res.json().data[0].id}/open`,
      headers: jsonApiHeaders(stack.apiKey, p.token),
    });
    expect(opened.statusCode, opened.body).toBe(200);
  });

  it('validates the body (422 with pointers), the media type (415), the id (400/404) and the token (401)', async () => {
    const p = await newPlayer();
    const url = `/api/v1/chests/${ids['Wooden Chest']}/purchase`;
    const post = (payload: unknown, headers = jsonApiHeaders(stack.apiKey, p.token)) =>
      stack.inject({ method: 'POST', url, headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });
    const pointer = async (payload: unknown) => expectError(await post(payload), 422)[0]!.source?.pointer;
    expect(await pointer({ data: { type: 'chest', attributes: { currency: 'coins' } } })).toBe('/data/type');
    expect(await pointer({ data: { type: 'purchase', attributes: {} } })).toBe('/data/attributes/currency');
    expect(await pointer({ data: { type: 'purchase', attributes: { currency: 'Coins!' } } })).toBe('/data/attributes/currency');
    expect(await pointer({ data: { type: 'purchase', attributes: { currency: 'coins', quantity: 11 } } })).toBe('/data/attributes/quantity');
    expect(await pointer({ data: { type: 'purchase', attributes: { currency: 'coins', quantity: '2' } } })).toBe('/data/attributes/quantity');
    expect(await pointer({ data: { type: 'purchase', attributes: { currency: 'coins', quantity: 0 } } })).toBe('/data/attributes/quantity');
    expect(await pointer({})).toBe('/data');
    expectError(await post('{"data":'), 400, 'malformed_json');
    expectError(
      await post(
        { data: { type: 'purchase', attributes: { currency: 'coins' } } },
        { ...jsonApiHeaders(stack.apiKey, p.token), 'content-type': 'application/json' },
      ),
      415,
    );
    expectError(await post({ data: { type: 'purchase', attributes: { currency: 'coins' } } }, jsonApiHeaders(stack.apiKey)), 401);
    const body = { data: { type: 'purchase', attributes: { currency: 'coins' } } };
    expectError(
      await stack.inject({ method: 'POST', url: '/api/v1/chests/nope/purchase', headers: jsonApiHeaders(stack.apiKey, p.token), payload: body }),
      400,
      'invalid_id',
    );
    expectError(
      await stack.inject({
        method: 'POST',
        url: `/api/v1/chests/${randomUUID()}/purchase`,
        headers: jsonApiHeaders(stack.apiKey, p.token),
        payload: body,
      }),
      404,
      'chest_not_found',
    );
    // An inventory chest id is not a catalog chest.
    expectError(
      await stack.inject({
        method: 'POST',
        url: `/api/v1/chests/${p.starterChestId}/purchase`,
        headers: jsonApiHeaders(stack.apiKey, p.token),
        payload: body,
      }),
      404,
      'chest_not_found',
    );
    expect((await wallet(stack, p)).coins!.balance).toBe('1500.00');
  });

  it('never overdraws under concurrent purchases', async () => {
    const p = await newPlayer();
    const results = await Promise.all(Array.from({ length: 10 }, () => purchase(stack, p, ids['Wooden Chest']!, 'coins')));
    const ok = results.filter((r) => r.statusCode === 201);
    expect(ok).toHaveLength(3);
    for (const r of results.filter((x) => x.statusCode !== 201)) expectError(r, 409, 'insufficient_funds');
    expect((await wallet(stack, p)).coins!.balance).toBe('0.00');
    expect((await inventory(stack, p)).meta.chest_types.purchased).toBe(3);
  });

  it('answers a retry with the same Idempotency-Key like the first purchase, buying once, even concurrently', async () => {
    const p = await newPlayer();
    const key = `buy-${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 4 }, () => purchase(stack, p, ids['Wooden Chest']!, 'coins', 1, key)));
    // One bought; concurrent twins either waited for it (409 in use) or were answered by it.
    const bought = results.filter((r) => r.statusCode === 201);
    expect(bought.length).toBeGreaterThanOrEqual(1);
    for (const r of results.filter((x) => x.statusCode !== 201)) expectError(r, 409, 'idempotency_key_in_use');
    const again = await purchase(stack, p, ids['Wooden Chest']!, 'coins', 1, key);
    expect(again.statusCode, again.body).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const first = bought.find((r) => r.headers['idempotent-replayed'] === undefined)!.json();
    expect(again.json().data).toEqual(first.data);
    expect(again.json().meta).toEqual(first.meta);
    expect((await wallet(stack, p)).coins!.balance).toBe('1000.00');
    expect((await inventory(stack, p)).meta.chest_types.purchased).toBe(1);
    // The key bought a Wooden Chest: anything else with it is refused, and nothing changes.
    expectError(await purchase(stack, p, ids['Wooden Chest']!, 'coins', 2, key), 409, 'idempotency_key_reused');
    expectError(await purchase(stack, p, ids['Silver Chest']!, 'coins', 1, key), 409, 'idempotency_key_reused');
    expect((await wallet(stack, p)).coins!.balance).toBe('1000.00');
  });

  it('releases the Idempotency-Key of a purchase that failed, so the corrected retry buys', async () => {
    const p = await newPlayer();
    const key = `buy-${randomUUID()}`;
    expectError(await purchase(stack, p, ids['Wooden Chest']!, 'coins', 4, key), 409, 'insufficient_funds');
    await credit(stack, p, (await wallet(stack, p)).coins!.id, '5000');
    const retry = await purchase(stack, p, ids['Wooden Chest']!, 'coins', 4, key);
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expectError(await purchase(stack, p, ids['Wooden Chest']!, 'coins', 1, 'a key with spaces'), 400, 'invalid_idempotency_key');
  });
});
