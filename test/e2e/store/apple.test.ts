import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { registerThroughGateway } from '../../support/register.js';
import {
  ADULT_BIRTH_YEAR,
  appleGems,
  balances,
  inventoryIds,
  newPlayer,
  startStoreStack,
  storeContent,
  submitApple,
  type StoreStack,
} from '../../support/store/store-stack.js';
import { createApp, sql } from '../../../services/chests/test/support/chests.js';

describe('App Store purchases', () => {
  let s: StoreStack;
  beforeAll(async () => {
    s = await startStoreStack();
  });
  afterAll(async () => s?.close());

  /** The player's wallet ledger rows of a reason (the wallet's own record of every balance change). */
  const ledger = (playerId: string, reason: string) =>
    sql<{ delta: string; reference: string }>(
      s.stack,
      'SELECT delta::text, reference FROM wallet.ledger WHERE player_id = $1 AND reason = $2 ORDER BY id',
      [playerId, reason],
    );
  /** The store's rows of a transaction (one at most: the transaction is unique across apps). */
  const storeRows = (transactionId: string) =>
    sql<{ player_id: string | null; app_id: string; state: string }>(
      s.stack,
      'SELECT player_id, app_id, state FROM store.purchases WHERE transaction_id = $1',
      [transactionId],
    );
  const transactionIdOf = (jws: string): string => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()).transactionId;

  it('verifies a signed transaction, grants its product once and answers with the balance (read-your-writes)', async () => {
    const p = await newPlayer(s);
    const before = Number((await balances(s, p.token)).gems);
    const jws = await appleGems(s, p.id);
    const res = await submitApple(s, p.token, jws);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expectJsonApi(body);
    expect(body.data.type).toBe('store_purchase');
    expect(body.data.attributes).toMatchObject({
      platform: 'apple',
      product_id: 'gems-500',
      state: 'granted',
      price: { amount: '4.99', currency: 'USD' },
    });
    expect(body.meta.grants.currencies).toEqual([{ currency: 'gems', amount: '500' }]);
    expect(Number(body.meta.balances.gems)).toBe(before + 500);
    expect(Number((await balances(s, p.token)).gems)).toBe(before + 500);

    const again = await submitApple(s, p.token, jws);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().meta.replayed).toBe(true);
    expect(again.json().data.id).toBe(body.data.id);
    expect(Number((await balances(s, p.token)).gems)).toBe(before + 500);
  });

  it('grants the chests of a pack into the inventory before answering', async () => {
    const p = await newPlayer(s);
    const res = await submitApple(s, p.token, await appleGems(s, p.id, { productId: 'com.example.chests.starter_pack' }));
    expect(res.statusCode, res.body).toBe(201);
    const chests = res.json().meta.grants.chests as { id: string }[];
    expect(chests).toHaveLength(2);
    const ids = await inventoryIds(s, p.token);
    for (const c of chests) expect(ids).toContain(c.id);
  });

  it('grants a transaction submitted 50 times at once exactly once: one 201, 49 replays of the same purchase, one ledger credit', async () => {
    const p = await newPlayer(s);
    const before = Number((await balances(s, p.token)).gems);
    const jws = await appleGems(s, p.id);
    const answers = await Promise.all(Array.from({ length: 50 }, () => submitApple(s, p.token, jws)));
    const created = answers.filter((r) => r.statusCode === 201);
    const replayed = answers.filter((r) => r.statusCode === 200);
    expect(created, answers.map((r) => `${r.statusCode} ${r.body.slice(0, 200)}`).join('\n')).toHaveLength(1);
    expect(replayed).toHaveLength(49);
    const purchaseId = created[0]!.json().data.id;
    for (const r of replayed) {
      const body = r.json();
      expectJsonApi(body);
      expect(body.meta.replayed).toBe(true);
      expect(body.data.id).toBe(purchaseId);
    }
    expect(Number((await balances(s, p.token)).gems)).toBe(before + 500);
    expect(await ledger(p.id, 'store_purchase')).toEqual([{ delta: '500.00', reference: `store:${purchaseId}:gems` }]);
  });

  it('refuses a transaction granted to one player to another player (409 transaction_claimed), granting nothing', async () => {
    const [first, other] = await Promise.all([newPlayer(s), newPlayer(s)]);
    // No appAccountToken: the transaction names no player, so only the claim can tell them apart.
    const jws = await appleGems(s, first.id, { appAccountToken: undefined });
    expect((await submitApple(s, first.token, jws)).statusCode).toBe(201);
    const before = await balances(s, other.token);
    expectError(await submitApple(s, other.token, jws), 409, 'transaction_claimed');
    expect(await balances(s, other.token)).toEqual(before);
    expect(await ledger(other.id, 'store_purchase')).toEqual([]);
    expect(await storeRows(transactionIdOf(jws))).toEqual([expect.objectContaining({ player_id: first.id, state: 'granted' })]);
  });

  it('refuses a transaction granted in one app to a player of another app selling the same products (409 transaction_claimed)', async () => {
    const first = await newPlayer(s);
    const jws = await appleGems(s, first.id, { appAccountToken: undefined });
    expect((await submitApple(s, first.token, jws)).statusCode).toBe(201);

    const other = await createApp(s.stack, storeContent());
    const stranger = await registerThroughGateway(s.stack, other.publishableKey);
    // An adult (the content's CN rule pack refuses store payments to a player of unknown age).
    const declared = await s.stack.inject({
      method: 'PATCH',
      url: '/api/v1/players/me',
      headers: jsonApiHeaders(other.publishableKey, stranger.token),
      payload: { data: { type: 'player', attributes: { birth_year: ADULT_BIRTH_YEAR } } },
    });
    expect(declared.statusCode, declared.body).toBe(200);
    // The other app's store content reaches the store service through content.loaded: its first
    // transaction of its own is granted once it has.
    await eventually(async () => {
      const own = await submitApple(
        s,
        stranger.token,
        await appleGems(s, stranger.id, { productId: 'com.example.chests.gems_100' }),
        other.publishableKey,
      );
      expect(own.statusCode, own.body).toBe(201);
    }, 20_000);
    const before = await ledger(stranger.id, 'store_purchase');
    expectError(await submitApple(s, stranger.token, jws, other.publishableKey), 409, 'transaction_claimed');
    expect(await ledger(stranger.id, 'store_purchase')).toEqual(before);
    expect(await storeRows(transactionIdOf(jws))).toEqual([expect.objectContaining({ player_id: first.id, app_id: s.appId })]);
  });

  it('answers 201 without balances while the wallet is down, replays meanwhile, and the gems land once when it is back', async () => {
    const p = await newPlayer(s);
    const before = Number((await balances(s, p.token)).gems);
    const jws = await appleGems(s, p.id);
    await s.stack.stopService('wallet');
    try {
      const res = await submitApple(s, p.token, jws);
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json();
      expectJsonApi(body);
      expect(body.meta).not.toHaveProperty('balances');
      expect(body.meta.grants.currencies).toEqual([{ currency: 'gems', amount: '500' }]);
      const again = await submitApple(s, p.token, jws);
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json().meta.replayed).toBe(true);
      expect(again.json().data.id).toBe(body.data.id);
      expect(await ledger(p.id, 'store_purchase')).toEqual([]);
    } finally {
      await s.stack.startService('wallet');
    }
    await eventually(async () => expect(await ledger(p.id, 'store_purchase')).toHaveLength(1), 20_000);
    // A replay after the wallet is back grants nothing more.
    expect((await submitApple(s, p.token, jws)).statusCode).toBe(200);
    expect(Number((await balances(s, p.token)).gems)).toBe(before + 500);
    expect(await ledger(p.id, 'store_purchase')).toHaveLength(1);
  });
});
