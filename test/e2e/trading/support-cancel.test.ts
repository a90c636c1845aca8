import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectJsonApi } from '../../support/jsonapi-schema.js';
import { appOfToken, grantCurrency } from '../../support/grant-currency.js';
import { createApp } from '../../../services/chests/test/support/chests.js';
import { collectionsDb, waitForContent } from '../collections/support.js';
import { balance, befriend, copies, give, post, trader, tradingContent, type Trader, type TradingApp } from './support.js';

/**
 * A player's trades in the admin API (docs/console.md, "A player's trades"), through the running
 * stack: the list with why each trade ended, and support's cancel of an open trade, which gives
 * the escrowed copy, the stamina point and the offer's tokens back to the offerer exactly once,
 * is recorded in the audit log with its note, and refuses every bad input with nothing changed.
 */
describe('trades: the studio support', () => {
  let stack: TestStack;
  let app: TradingApp & { secretKey: string };
  let other: TradingApp & { secretKey: string };

  const made = async () => {
    const content = tradingContent();
    const a = await createApp(stack, content);
    await waitForContent(stack, a.publishableKey, content.collections.length);
    return { appId: a.appId, apiKey: a.publishableKey, secretKey: a.secretKey };
  };

  beforeAll(async () => {
    stack = await startStack();
    [app, other] = await Promise.all([made(), made()]);
  });
  afterAll(async () => stack?.close());

  const adminHeaders = (key = app.secretKey) => ({ apikey: key, accept: 'application/vnd.api+json' });
  const admin = async (url: string, key = app.secretKey) => {
    const res = await stack.inject({ method: 'GET', url, headers: adminHeaders(key) });
    expectJsonApi(res.json());
    return res;
  };
  const cancel = async (id: string, payload?: object, key = app.secretKey) => {
    const res = await stack.inject({
      method: 'POST',
      url: `/api/v1/admin/trades/${id}/cancel`,
      headers: { ...adminHeaders(key), ...(payload === undefined ? {} : { 'content-type': 'application/vnd.api+json' }) },
      ...(payload === undefined ? {} : { payload }),
    });
    expectJsonApi(res.json());
    return res;
  };
  const offer = (p: Trader, partner: string, giveId: string, want: string) =>
    post(stack, p, '/api/v1/trades', {
      data: { type: 'trade', attributes: { give: giveId, want }, relationships: { partner: { data: { type: 'player', id: partner } } } },
    });
  const stateOf = async (p: Trader, id: string) => {
    const res = await stack.inject({ method: 'GET', url: `/api/v1/trades/${id}`, headers: jsonApiHeaders(p.apiKey, p.token) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.attributes.state as string;
  };
  const stamina = async (p: Trader) => {
    const db = await collectionsDb(stack);
    try {
      return (await db.query('SELECT stamina FROM trade_players WHERE player_id = $1', [p.id])).rows[0]?.stamina as number | undefined;
    } finally {
      await db.end();
    }
  };
  const pair = async (a: string[], b: string[], where = app) => {
    const [x, y] = await Promise.all([trader(stack, where), trader(stack, where)]);
    await Promise.all([give(stack, where, x, a), give(stack, where, y, b)]);
    await befriend(stack, x, y);
    return [x, y] as const;
  };

  it('lists the trades with why each ended, and cancels an open one: copy, stamina and tokens back once, audited with the note', async () => {
    const [a, b] = await pair(['ancient-sun-disk', 'ancient-clay-amulet'], ['ancient-golden-mask', 'ancient-stone-tablet']);
    await grantCurrency(stack, appOfToken(a.token), a.id, 'trade_tokens', '5');
    const open = await offer(a, b.id, 'ancient-sun-disk', 'ancient-golden-mask');
    expect(open.statusCode, open.body).toBe(201);
    const tradeId = open.json().data.id as string;
    expect([await balance(stack, a), await stamina(a)]).toEqual([0, 2]);
    expect(await copies(stack, a)).toEqual({ 'ancient-clay-amulet': 1 });

    // Both players' lists show it open, with no reason yet.
    for (const p of [a, b]) {
      const list = await admin(`/api/v1/admin/players/${p.id}/trades`);
      expect(list.statusCode, list.body).toBe(200);
      expect(list.headers['cache-control']).toBe('no-store');
      expect(list.json().meta.total_count).toBe(1);
      expect(list.json().data[0]).toMatchObject({
        type: 'trade',
        id: tradeId,
        attributes: {
          state: 'offered',
          reason: null,
          ended_at: null,
          give: { collectible_id: 'ancient-sun-disk' },
          want: { collectible_id: 'ancient-golden-mask' },
        },
        relationships: { offerer: { data: { id: a.id } }, partner: { data: { id: b.id } } },
      });
    }

    // A bad body, another app's key, an id that is no UUID, an unknown trade: refused, nothing changes.
    expect((await cancel(tradeId, { meta: { note: '' } })).statusCode).toBe(422);
    expect((await cancel(tradeId, { data: { type: 'trade' } })).statusCode).toBe(422);
    const foreign = await cancel(tradeId, undefined, other.secretKey);
    expect([foreign.statusCode, foreign.json().errors[0].code]).toEqual([404, 'trade_not_found']);
    expect((await cancel('not-a-uuid')).statusCode).toBe(400);
    const unknown = await cancel('00000000-0000-4000-8000-000000000000');
    expect([unknown.statusCode, unknown.json().errors[0].code]).toEqual([404, 'trade_not_found']);
    const asPlayer = await stack.inject({
      method: 'POST',
      url: `/api/v1/admin/trades/${tradeId}/cancel`,
      headers: jsonApiHeaders(a.apiKey, a.token),
    });
    expect(asPlayer.statusCode).toBeGreaterThanOrEqual(401);
    expect(asPlayer.statusCode).toBeLessThan(404);
    expect(await stateOf(a, tradeId)).toBe('offered');
    expect([await balance(stack, a), await stamina(a)]).toEqual([0, 2]);

    const note = `Ticket ${tradeId.slice(0, 8)}: offered by mistake`;
    const done = await cancel(tradeId, { meta: { note } });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().data.attributes).toMatchObject({ state: 'cancelled', reason: 'cancelled_by_support' });
    expect(done.json().data.attributes.ended_at).not.toBeNull();
    // Everything back to the offerer, and the players see it cancelled.
    expect(await copies(stack, a)).toEqual({ 'ancient-clay-amulet': 1, 'ancient-sun-disk': 1 });
    expect(await copies(stack, b)).toEqual({ 'ancient-golden-mask': 1, 'ancient-stone-tablet': 1 });
    await eventually(async () => expect(await balance(stack, a)).toBe(5));
    expect(await stamina(a)).toBe(3);
    expect([await stateOf(a, tradeId), await stateOf(b, tradeId)]).toEqual(['cancelled', 'cancelled']);

    // Again, or the player's own cancel: the trade has ended, nothing comes back twice.
    const again = await cancel(tradeId, { meta: { note } });
    expect([again.statusCode, again.json().errors[0].code, again.json().errors[0].meta?.state]).toEqual([409, 'trade_ended', 'cancelled']);
    const own = await post(stack, a, `/api/v1/trades/${tradeId}/cancel`);
    expect([own.statusCode, own.json().errors[0].code]).toEqual([409, 'trade_ended']);
    expect([await balance(stack, a), await stamina(a)]).toEqual([5, 3]);
    expect(await copies(stack, a)).toEqual({ 'ancient-clay-amulet': 1, 'ancient-sun-disk': 1 });

    // A completed trade cannot be cancelled; the list tells the two apart by reason.
    const second = await offer(a, b.id, 'ancient-clay-amulet', 'ancient-stone-tablet');
    expect(second.statusCode, second.body).toBe(201);
    expect((await post(stack, b, `/api/v1/trades/${second.json().data.id}/accept`)).statusCode).toBe(200);
    const late = await cancel(second.json().data.id, { meta: { note } });
    expect([late.statusCode, late.json().errors[0].code, late.json().errors[0].meta?.state]).toEqual([409, 'trade_ended', 'completed']);
    const list = (await admin(`/api/v1/admin/players/${b.id}/trades?page[limit]=1`)).json();
    expect(list.meta.total_count).toBe(2);
    expect(list.data.map((t: { attributes: { reason: string } }) => t.attributes.reason)).toEqual(['completed']);
    expect(list.links.next).toContain('page%5Boffset%5D=1');
    const rest = (await admin(`/api/v1/admin/players/${b.id}/trades?page[limit]=1&page[offset]=1`)).json();
    expect(rest.data.map((t: { attributes: { reason: string } }) => t.attributes.reason)).toEqual(['cancelled_by_support']);

    // The audit log keeps each cancel with its note and answer (the refused ones too); the reads are not in it.
    await eventually(async () => {
      const entries = (await admin('/api/v1/admin/audit?page[limit]=100')).json().data as {
        attributes: { action: string; target: string; status: number; note: string | null };
      }[];
      const mine = entries.map((e) => e.attributes).filter((e) => [tradeId, second.json().data.id, a.id, b.id].includes(e.target));
      expect(mine.every((e) => e.action === 'POST /api/v1/admin/trades/{id}/cancel')).toBe(true);
      expect(mine.filter((e) => e.status === 200).map((e) => [e.note, e.target])).toEqual([[note, tradeId]]);
      expect(mine.filter((e) => e.note === note).map((e) => [e.status, e.target])).toEqual([
        [409, second.json().data.id],
        [409, tradeId],
        [200, tradeId],
      ]);
    });
  });

  it("answers 404 for another app's player and 400 for a malformed id; an empty list for a player without trades", async () => {
    const [x] = await Promise.all([trader(stack, other)]);
    const foreign = await admin(`/api/v1/admin/players/${x.id}/trades`);
    expect([foreign.statusCode, foreign.json().errors[0].code]).toEqual([404, 'player_not_found']);
    expect((await admin('/api/v1/admin/players/nope/trades')).statusCode).toBe(400);
    const none = await admin(`/api/v1/admin/players/${x.id}/trades`, other.secretKey);
    expect(none.statusCode, none.body).toBe(200);
    expect([none.json().data, none.json().meta.total_count]).toEqual([[], 0]);
  });
});
