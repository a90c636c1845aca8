import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectJsonApi } from '../../support/jsonapi-schema.js';
import { appOfToken, grantCurrency } from '../../support/grant-currency.js';
import { collectionsDb } from '../collections/support.js';
import { balance, befriend, copies, dissolve, give, post, trader, tradingApp, tradingContent, type Trader, type TradingApp } from './support.js';

/**
 * Trades through the running stack (docs/content.md, "Trading"; docs/architecture.md, "The trade
 * saga"): escrow, tokens and stamina charged once and returned once, both copies moving in one
 * step, and every refusal of the contract with nothing changed.
 */
describe('trades', () => {
  let stack: TestStack;
  let app: TradingApp;
  let open: TradingApp;

  beforeAll(async () => {
    stack = await startStack();
    [app, open] = await Promise.all([
      tradingApp(stack),
      tradingApp(
        stack,
        tradingContent((t) => void (t.friends_only = false)),
      ),
    ]);
  });
  afterAll(async () => stack?.close());

  const offerBody = (partner: string, giveId: string, want: string) => ({
    data: { type: 'trade', attributes: { give: giveId, want }, relationships: { partner: { data: { type: 'player', id: partner } } } },
  });
  const offer = (p: Trader, partner: string, giveId: string, want: string) => post(stack, p, '/api/v1/trades', offerBody(partner, giveId, want));
  const act = (p: Trader, id: string, action: string) => post(stack, p, `/api/v1/trades/${id}/${action}`);
  const read = async (p: Trader, url: string) => {
    const res = await stack.inject({ method: 'GET', url, headers: jsonApiHeaders(p.apiKey, p.token) });
    expectJsonApi(res.json());
    return res;
  };
  const tokens = (p: Trader, n: number) => grantCurrency(stack, appOfToken(p.token), p.id, 'trade_tokens', String(n));
  const stamina = async (p: Trader) => {
    const db = await collectionsDb(stack);
    try {
      return (await db.query('SELECT stamina FROM trade_players WHERE player_id = $1', [p.id])).rows[0]?.stamina as number | undefined;
    } finally {
      await db.end();
    }
  };
  /** Two friends of the app, each holding what is given. */
  const pair = async (a: string[], b: string[], where = app) => {
    const [x, y] = await Promise.all([trader(stack, where), trader(stack, where)]);
    await Promise.all([give(stack, where, x, a), give(stack, where, y, b)]);
    if (where === app) await befriend(stack, x, y);
    return [x, y] as const;
  };

  it('offers with escrow, then completes: both copies move in one step, tokens charged on both sides', async () => {
    const [a, b] = await pair(['ancient-sun-disk', 'ancient-clay-amulet'], ['ancient-golden-mask']);
    await Promise.all([tokens(a, 7), tokens(b, 5)]);
    const res = await offer(a, b.id, 'ancient-sun-disk', 'ancient-golden-mask');
    expect(res.statusCode, res.body).toBe(201);
    const trade = res.json().data;
    expect(trade).toMatchObject({
      type: 'trade',
      attributes: {
        state: 'offered',
        give: { collectible_id: 'ancient-sun-disk', rarity: 'rare' },
        want: { collectible_id: 'ancient-golden-mask', rarity: 'rare' },
        tokens: { currency: 'trade_tokens', offer: 5, accept: 5 },
        ended_at: null,
      },
      relationships: { offerer: { data: { type: 'player', id: a.id } }, partner: { data: { type: 'player', id: b.id } } },
    });
    // Escrow: the copy counts nowhere, and cannot be dissolved or offered again.
    expect(await copies(stack, a)).toEqual({ 'ancient-clay-amulet': 1 });
    expect(await balance(stack, a)).toBe(2);
    expect(await stamina(a)).toBe(2);
    expect((await dissolve(stack, a, 'ancient-sun-disk', 1)).json().errors[0].code).toBe('not_owned');
    // Both players read it; the list filters by role and state.
    expect((await read(b, `/api/v1/trades/${trade.id}`)).json().data.id).toBe(trade.id);
    expect((await read(b, '/api/v1/trades?filter[role]=incoming')).json().data.map((t: { id: string }) => t.id)).toEqual([trade.id]);
    expect((await read(b, '/api/v1/trades?filter[role]=outgoing')).json().data).toEqual([]);
    expect((await read(a, '/api/v1/trades?filter[state]=offered,completed')).json().meta.total_count).toBe(1);

    const done = await act(b, trade.id, 'accept');
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().data.attributes.state).toBe('completed');
    expect(await copies(stack, a)).toEqual({ 'ancient-clay-amulet': 1, 'ancient-golden-mask': 1 });
    expect(await copies(stack, b)).toEqual({ 'ancient-sun-disk': 1 });
    expect([await balance(stack, a), await balance(stack, b)]).toEqual([2, 0]);
    // Any action on an ended trade: 409 trade_ended with its state.
    for (const [p, action] of [
      [b, 'accept'],
      [b, 'decline'],
      [a, 'cancel'],
    ] as const) {
      const again = await act(p, trade.id, action);
      expect(again.statusCode).toBe(409);
      expect(again.json().errors[0]).toMatchObject({ code: 'trade_ended', meta: { state: 'completed' } });
    }
    expect((await read(a, '/api/v1/players/me/trades')).json().data[0].attributes.state).toBe('completed');
    expect((await read(a, `/api/v1/players/${a.id.toUpperCase()}/trades`)).statusCode).toBe(200);
    expect((await read(a, `/api/v1/players/${b.id}/trades`)).statusCode).toBe(404);
    // Trades are not openings.
    expect((await read(a, '/api/v1/players/me/openings')).json().data).toEqual([]);
    const db = await collectionsDb(stack);
    try {
      const log = await db.query('SELECT actor, action, state FROM trade_log WHERE trade_id = $1 ORDER BY at', [trade.id]);
      expect(log.rows.map((r) => r.action)).toEqual(['offer', 'offer_paid', 'accept', 'complete']);
      // Its events, once each, written with the steps that made them true.
      const events = await db.query("SELECT payload->>'type' AS type FROM outbox WHERE payload->'data'->>'trade_id' = $1 ORDER BY created_at", [
        trade.id,
      ]);
      expect(events.rows.map((r) => r.type)).toEqual(['trade.offered', 'trade.completed']);
    } finally {
      await db.end();
    }
  });

  it('returns escrow, stamina and tokens exactly once on decline and on cancel', async () => {
    const [a, b] = await pair(['ancient-crystal-skull', 'ancient-bronze-coin'], ['ancient-serpent-idol', 'ancient-carved-totem']);
    await tokens(a, 5);
    const first = (await offer(a, b.id, 'ancient-crystal-skull', 'ancient-serpent-idol')).json().data;
    expect(await balance(stack, a)).toBe(0);
    expect(await copies(stack, a)).toEqual({ 'ancient-bronze-coin': 1 });
    const declined = await act(b, first.id, 'decline');
    expect(declined.json().data.attributes.state).toBe('declined');
    expect(await balance(stack, a)).toBe(5);
    expect(await copies(stack, a)).toEqual({ 'ancient-crystal-skull': 1, 'ancient-bronze-coin': 1 });
    expect(await stamina(a)).toBe(3);
    // The offerer cannot accept or decline; the partner cannot cancel.
    const second = (await offer(a, b.id, 'ancient-bronze-coin', 'ancient-carved-totem')).json().data;
    expect((await act(a, second.id, 'accept')).json().errors[0].code).toBe('trade_action_forbidden');
    expect((await act(b, second.id, 'cancel')).json().errors[0].code).toBe('trade_action_forbidden');
    expect((await act(a, second.id, 'cancel')).json().data.attributes.state).toBe('cancelled');
    expect((await act(a, second.id, 'cancel')).json().errors[0]).toMatchObject({ code: 'trade_ended', meta: { state: 'cancelled' } });
    expect(await copies(stack, a)).toEqual({ 'ancient-crystal-skull': 1, 'ancient-bronze-coin': 1 });
    expect(await balance(stack, a)).toBe(5);
    expect(await stamina(a)).toBe(3);
    const db = await collectionsDb(stack);
    try {
      const ended = await db.query(
        "SELECT payload->'data'->>'trade_id' AS id, payload->'data'->>'reason' AS reason FROM outbox WHERE payload->>'type' = 'trade.ended' AND payload->'data'->>'trade_id' = ANY($1::text[])",
        [[first.id, second.id]],
      );
      expect(Object.fromEntries(ended.rows.map((r) => [r.id, r.reason]))).toEqual({ [first.id]: 'declined', [second.id]: 'cancelled' });
    } finally {
      await db.end();
    }
    // A third party sees neither trade.
    const c = await trader(stack, app);
    expect((await read(c, `/api/v1/trades/${first.id}`)).statusCode).toBe(404);
    expect((await act(c, second.id, 'decline')).statusCode).toBe(404);
  });

  it('refuses, with the codes of the contract, and changes nothing', async () => {
    const [a, b] = await pair(['ancient-sun-disk', 'ancient-clay-amulet', 'ancient-pharaohs-crook'], ['ancient-golden-mask', 'ancient-bronze-coin']);
    const stranger = await trader(stack, app);
    const other = await trader(stack, open);
    const cases: [string, unknown, number, string | undefined][] = [
      ['self', offerBody(a.id, 'ancient-clay-amulet', 'ancient-bronze-coin'), 422, 'partner_is_self'],
      ['self, upper case', offerBody(a.id.toUpperCase(), 'ancient-clay-amulet', 'ancient-bronze-coin'), 422, 'partner_is_self'],
      ["another app's player", offerBody(other.id, 'ancient-clay-amulet', 'ancient-bronze-coin'), 404, 'player_not_found'],
      ['a non-friend', offerBody(stranger.id, 'ancient-clay-amulet', 'ancient-bronze-coin'), 403, 'not_friends'],
      ['unknown collectible', offerBody(b.id, 'no-such-thing', 'ancient-bronze-coin'), 404, 'collectible_not_found'],
      ['upper-case collectible', offerBody(b.id, 'ANCIENT-CLAY-AMULET', 'ancient-bronze-coin'), 404, 'collectible_not_found'],
      ['rarity mismatch', offerBody(b.id, 'ancient-clay-amulet', 'ancient-golden-mask'), 422, 'rarity_mismatch'],
      ['not tradable', offerBody(b.id, 'ancient-pharaohs-crook', 'ancient-heart-of-the-desert'), 422, 'not_tradable'],
      ['not owned', offerBody(b.id, 'ancient-jade-scarab', 'ancient-bronze-coin'), 409, 'not_owned'],
      ['insufficient funds', offerBody(b.id, 'ancient-sun-disk', 'ancient-golden-mask'), 409, 'insufficient_funds'],
      ['partner id not a uuid', offerBody('nope', 'ancient-clay-amulet', 'ancient-bronze-coin'), 422, undefined],
      ['no partner', { data: { type: 'trade', attributes: { give: 'ancient-clay-amulet', want: 'ancient-bronze-coin' } } }, 422, undefined],
    ];
    for (const [what, body, status, code] of cases) {
      const res = await post(stack, a, '/api/v1/trades', body as object);
      expect(res.statusCode, `${what}: ${res.body}`).toBe(status);
      if (code) expect(res.json().errors[0].code, what).toBe(code);
    }
    expect(await copies(stack, a)).toEqual({ 'ancient-sun-disk': 1, 'ancient-clay-amulet': 1, 'ancient-pharaohs-crook': 1 });
    expect(await balance(stack, a)).toBe(0);
    expect(await stamina(a)).toBe(3);
    expect((await read(a, '/api/v1/trades')).json().meta.total_count).toBe(0);
    expect((await read(a, '/api/v1/trades?filter[role]=sideways')).statusCode).toBe(400);
    expect((await read(a, '/api/v1/trades?filter[colour]=red')).statusCode).toBe(400);
    // One open offer per pair and collectible.
    await give(stack, app, a, ['ancient-clay-amulet']);
    expect((await offer(a, b.id, 'ancient-clay-amulet', 'ancient-bronze-coin')).statusCode).toBe(201);
    const twice = await offer(a, b.id, 'ancient-clay-amulet', 'ancient-bronze-coin');
    expect([twice.statusCode, twice.json().errors[0].code]).toEqual([409, 'offer_exists']);
    expect(await copies(stack, a)).toMatchObject({ 'ancient-clay-amulet': 1 });
  });

  it('spends stamina per offer and answers no_trade_stamina with meta.retry_after', async () => {
    // Friends only is off in this app: no friendship needed.
    const [a, b] = await pair(
      ['ancient-clay-amulet', 'ancient-bronze-coin', 'ancient-carved-totem', 'ancient-stone-tablet'],
      ['ancient-jade-scarab'],
      open,
    );
    for (const id of ['ancient-clay-amulet', 'ancient-bronze-coin', 'ancient-carved-totem'])
      expect((await offer(a, b.id, id, 'ancient-jade-scarab')).statusCode).toBe(201);
    const tired = await offer(a, b.id, 'ancient-stone-tablet', 'ancient-jade-scarab');
    expect(tired.statusCode).toBe(409);
    const err = tired.json().errors[0];
    expect(err.code).toBe('no_trade_stamina');
    expect(err.meta.retry_after).toBeGreaterThan(7 * 3600);
    expect(err.meta.retry_after).toBeLessThanOrEqual(8 * 3600);
    expect(await copies(stack, a)).toEqual({ 'ancient-stone-tablet': 1 });
  });

  it('completes a collection by a trade once, with its reward; giving the last copy away keeps it', async () => {
    const all = [
      'ancient-clay-amulet',
      'ancient-bronze-coin',
      'ancient-carved-totem',
      'ancient-stone-tablet',
      'ancient-obsidian-blade',
      'ancient-jade-scarab',
      'ancient-sun-disk',
      'ancient-serpent-idol',
      'ancient-golden-mask',
      'ancient-crystal-skull',
      'ancient-pharaohs-crook',
      'ancient-heart-of-the-desert',
    ];
    // a lacks only the jade scarab; b has it and wants a's spare amulet.
    const [a, b] = await pair([...all.filter((id) => id !== 'ancient-jade-scarab'), 'ancient-clay-amulet'], ['ancient-jade-scarab']);
    const t = (await offer(a, b.id, 'ancient-clay-amulet', 'ancient-jade-scarab')).json().data;
    expect((await act(b, t.id, 'accept')).statusCode).toBe(200);
    const completed = (await read(a, '/api/v1/collections/ancient-relics')).json().meta.collection_completeness;
    expect(completed.completed_at).not.toBeNull();
    // b now gives the scarab back for nothing of a's collection: a's completion stays.
    await give(stack, app, b, ['ancient-bronze-coin']);
    const back = (await offer(a, b.id, 'ancient-jade-scarab', 'ancient-bronze-coin')).json().data;
    expect((await act(b, back.id, 'accept')).statusCode).toBe(200);
    expect((await copies(stack, a))['ancient-jade-scarab']).toBeUndefined();
    expect((await read(a, '/api/v1/collections/ancient-relics')).json().meta.collection_completeness.completed_at).toBe(completed.completed_at);
    const db = await collectionsDb(stack);
    try {
      const rows = await db.query('SELECT count(*)::int AS n FROM collection_completions WHERE player_id = $1', [a.id]);
      expect(rows.rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
  });
});
