import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type BaseConfig, type RunningService } from '@ccs/shared';
import { CollectionsConfigSchema } from '../../../services/collections/src/config.js';
import { collectionsService } from '../../../services/collections/src/service.js';
import { appOfToken, grantCurrency } from '../../support/grant-currency.js';
import { eventually, startStack, type TestStack } from '../../support/stack.js';
import { collectionsDb } from '../collections/support.js';
import { balance, copies, dissolve, give, post, trader, tradingApp, tradingContent, type Trader, type TradingApp } from './support.js';

/**
 * The trade saga's invariants under races, through the running stack (docs/architecture.md, "The
 * trade saga"): whatever races accept, decline, cancel and the sweeper's expiry, a trade ends in
 * exactly one state and the copies, tokens and stamina add up; a copy is never in two places.
 */
describe('trade races', () => {
  let stack: TestStack;
  let app: TradingApp;
  let sweeper: RunningService<BaseConfig> | undefined;

  beforeAll(async () => {
    stack = await startStack();
    // Friends only off, and nothing kept by dissolving: any copy may be offered or dissolved.
    app = await tradingApp(
      stack,
      tradingContent((t) => {
        t.friends_only = false;
        t.dissolve_keeps = 0;
        t.daily_offer_cap = 1000;
      }),
    );
    // A second collections replica whose sweeper passes every 100 ms: expiry races the requests.
    sweeper = await startService(collectionsService, CollectionsConfigSchema.parse({ ...stack.env, TRADE_SWEEP_INTERVAL_MS: '100' }) as BaseConfig);
  });
  afterAll(async () => {
    await sweeper?.stop();
    await stack?.close();
  });

  const offerBody = (partner: string, giveId: string, want: string) => ({
    data: { type: 'trade', attributes: { give: giveId, want }, relationships: { partner: { data: { type: 'player', id: partner } } } },
  });
  const offer = (p: Trader, partner: string, giveId: string, want: string) => post(stack, p, '/api/v1/trades', offerBody(partner, giveId, want));
  const tokens = (p: Trader, n: number) => grantCurrency(stack, appOfToken(p.token), p.id, 'trade_tokens', String(n));
  const sql = async <T extends object>(text: string, params: unknown[]): Promise<T[]> => {
    const db = await collectionsDb(stack);
    try {
      return (await db.query(text, params)).rows as T[];
    } finally {
      await db.end();
    }
  };

  it('ends one trade in exactly one state under 50 concurrent accepts, declines and cancels and the expiry sweeper', async () => {
    const [a, b] = await Promise.all([trader(stack, app), trader(stack, app)]);
    await Promise.all([give(stack, app, a, ['ancient-sun-disk']), give(stack, app, b, ['ancient-golden-mask']), tokens(a, 5), tokens(b, 5)]);
    const res = await offer(a, b.id, 'ancient-sun-disk', 'ancient-golden-mask');
    expect(res.statusCode, res.body).toBe(201);
    const id: string = res.json().data.id;
    // Due a few milliseconds from now: the sweeper and the requests reach it at the same moment.
    await sql("UPDATE trades SET expires_at = now() + interval '20 milliseconds' WHERE id = $1", [id]);
    const actions = Array.from({ length: 50 }, (_, i) =>
      i % 3 === 0 ? ([b, 'accept'] as const) : i % 3 === 1 ? ([b, 'decline'] as const) : ([a, 'cancel'] as const),
    );
    const answers = await Promise.all(actions.map(([p, action]) => post(stack, p, `/api/v1/trades/${id}/${action}`)));

    // Ended once, by one of them; every other answer is a refusal that changed nothing.
    await eventually(async () => {
      const [t] = await sql<{ state: string }>('SELECT state FROM trades WHERE id = $1', [id]);
      expect(['completed', 'declined', 'cancelled', 'expired']).toContain(t!.state);
    });
    const [{ state }] = (await sql<{ state: string }>('SELECT state FROM trades WHERE id = $1', [id])) as [{ state: string }];
    const log = await sql<{ action: string; actor: string }>('SELECT action, actor FROM trade_log WHERE trade_id = $1 ORDER BY at', [id]);
    const terminal = log.filter((l) => ['complete', 'decline', 'cancel', 'expire'].includes(l.action));
    expect(terminal).toHaveLength(1);
    const ok = answers.filter((r) => r.statusCode === 200);
    expect(ok.length).toBe(state === 'expired' ? 0 : 1);
    for (const r of ok) expect(r.json().data.attributes.state).toBe(state);
    for (const r of answers.filter((x) => x.statusCode !== 200)) {
      expect([409, 503], r.body).toContain(r.statusCode);
      expect(['trade_ended', 'trade_busy', 'trade_interrupted']).toContain(r.json().errors[0].code);
    }
    // Copies, tokens and stamina add up: the owed refunds are all settled.
    await eventually(async () => {
      const owed = await sql<{ n: number }>('SELECT count(*)::int AS n FROM trade_refunds WHERE trade_id = $1 AND done_at IS NULL', [id]);
      expect(owed[0]!.n).toBe(0);
    });
    const [stamina] = await sql<{ stamina: number }>('SELECT stamina FROM trade_players WHERE player_id = $1', [a.id]);
    if (state === 'completed') {
      expect(await copies(stack, a)).toEqual({ 'ancient-golden-mask': 1 });
      expect(await copies(stack, b)).toEqual({ 'ancient-sun-disk': 1 });
      expect([await balance(stack, a), await balance(stack, b)]).toEqual([0, 0]);
      expect(stamina!.stamina).toBe(2);
    } else {
      expect(await copies(stack, a)).toEqual({ 'ancient-sun-disk': 1 });
      expect(await copies(stack, b)).toEqual({ 'ancient-golden-mask': 1 });
      expect([await balance(stack, a), await balance(stack, b)]).toEqual([5, 5]);
      expect(stamina!.stamina).toBe(3);
    }
  });

  it('lets a copy be offered once when it is offered twice at once: the other is 409 not_owned', async () => {
    for (let round = 0; round < 5; round++) {
      const [a, b, c] = await Promise.all([trader(stack, app), trader(stack, app), trader(stack, app)]);
      await give(stack, app, a, ['ancient-clay-amulet']);
      const answers = await Promise.all([
        offer(a, b.id, 'ancient-clay-amulet', 'ancient-bronze-coin'),
        offer(a, c.id, 'ancient-clay-amulet', 'ancient-bronze-coin'),
      ]);
      expect(answers.map((r) => r.statusCode).sort()).toEqual([201, 409]);
      expect(answers.find((r) => r.statusCode === 409)!.json().errors[0].code).toBe('not_owned');
      expect(await copies(stack, a)).toEqual({});
      const open = await sql<{ n: number }>("SELECT count(*)::int AS n FROM trades WHERE offerer_id = $1 AND state = 'offered'", [a.id]);
      expect(open[0]!.n).toBe(1);
    }
  });

  it('lets one of a dissolve and an offer of the last copy win', async () => {
    for (let round = 0; round < 5; round++) {
      const [a, b] = await Promise.all([trader(stack, app), trader(stack, app)]);
      await give(stack, app, a, ['ancient-carved-totem']);
      const [dissolved, offered] = await Promise.all([
        dissolve(stack, a, 'ancient-carved-totem', 1),
        offer(a, b.id, 'ancient-carved-totem', 'ancient-stone-tablet'),
      ]);
      expect([dissolved.statusCode, offered.statusCode].sort()).toEqual([201, 409]);
      const loser = dissolved.statusCode === 409 ? dissolved : offered;
      expect(loser.json().errors[0].code).toBe('not_owned');
      expect(await copies(stack, a)).toEqual({});
      // The copy went one way only: tokens for a dissolve, or a trade holding it.
      const trades = await sql<{ n: number }>('SELECT count(*)::int AS n FROM trades WHERE offerer_id = $1', [a.id]);
      expect(trades[0]!.n).toBe(offered.statusCode === 201 ? 1 : 0);
      expect(await balance(stack, a)).toBe(dissolved.statusCode === 201 ? 2 : 0);
    }
  });
});
