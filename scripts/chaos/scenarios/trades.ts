/**
 * Trades under kill -9 (docs/content.md, "Trading"; docs/architecture.md, the trade saga): an app
 * of its own with permissive trading (any rarity for any other between friends, one coin of token
 * cost for the offer and one for the accept, stamina 100, none back during the run), pairs of friends holding the copies
 * of their openings, and a load of offers, accepts, declines and cancels, each keyed and sent again
 * with its Idempotency-Key after a 5xx or a lost answer. Mid-load collections, then wallet, then
 * chests are killed with SIGKILL, each started again and waited ready before the next. Then the
 * sweeper's work is waited for (no trade mid-step, no refund owed; bounded by progress) and the
 * ground truth is read from Postgres and the API:
 * - every trade in one state: terminal, or `offered` and shown so by GET /api/v1/trades/{id};
 *   every 2xx answer the client got agrees with it (an accept answered 200 is completed, …);
 * - each collectible's copies in the app (owned + escrowed by open offers) as before the load;
 * - every player's coin balance equals the sum of its ledger; every trade debit refunded at most
 *   once, and exactly once when its trade did not complete with it;
 * - stamina never negative: 100 less the offers that kept their point (open or completed);
 * - no 500 anywhere.
 */
import { Api, inParallel } from '../support/client.js';
import { unexpectedUnderFault, type ChaosContext, type ScenarioReport, type Scenario } from '../support/context.js';
import { sleep } from '../support/infra.js';
import { settle } from '../support/recovery.js';
import type { Service } from '../support/stack.js';
import {
  copiesByCollectible,
  createTradingApp,
  Load,
  readHoldings,
  RETRY_MS,
  settleTrades,
  setUp,
  STAMINA,
  type Trader,
} from '../support/trade-load.js';

/** Killed in this order, each back and ready before the next. */
const KILLED: Service[] = ['collections', 'wallet', 'chests'];

interface TradeRow {
  id: string;
  state: string;
  offerer_id: string;
  stamina_spent: boolean;
  accept_attempt: number;
}

const tally = (keys: string[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 1;
  return out;
};
const fmt = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, n]) => `${k} ×${n}`)
    .join(', ') || 'none';

/** The ground truth of one app's trades, copies, coins and stamina, read after the load settled. */
class TradeTruth {
  readonly problems: string[] = [];
  lost = 0;
  duplicated = 0;
  wrong = 0;
  trades: TradeRow[] = [];
  byId = new Map<string, TradeRow>();
  copies = { before: 0, after: 0 };
  charged = 0;
  refunded = 0;

  constructor(
    private readonly ctx: ChaosContext,
    private readonly appId: string,
  ) {}

  private problem(p: string, kind?: 'lost' | 'duplicated' | 'wrong', n = 1): void {
    if (kind) this[kind] += n;
    this.problems.push(p);
  }

  /** Every trade in one state, none left mid-step; every 2xx answer of the load as the database holds it. */
  async states(load: Load): Promise<void> {
    this.trades = (
      await this.ctx.db.query<TradeRow>('SELECT id, state, offerer_id, stamina_spent, accept_attempt FROM collections.trades WHERE app_id = $1', [
        this.appId,
      ])
    ).rows;
    this.byId = new Map(this.trades.map((t) => [t.id, t]));
    for (const t of this.trades)
      if (t.state === 'offering' || t.state === 'accepting') this.problem(`trade ${t.id} still ${t.state} after settling`, 'lost');
    const expected = { offer: undefined, accept: 'completed', decline: 'declined', cancel: 'cancelled' } as const;
    for (const s of load.sent) {
      if (s.last.status < 200 || s.last.status > 299 || !s.tradeId) continue;
      const t = this.byId.get(s.tradeId);
      const want = expected[s.action];
      if (!t || t.state === 'failed' || (want && t.state !== want))
        this.problem(`${s.action} of ${s.tradeId} answered ${s.last.status} but the trade is ${t?.state ?? 'absent'}`, 'wrong');
    }
  }

  /** GET /api/v1/trades/{id} shows each trade as the database holds it; a failed offer never was one (404). */
  async api(api: Api, traders: Trader[]): Promise<void> {
    const tokenOf = new Map(traders.map((t) => [t.id, t.token]));
    await inParallel(4, this.trades, async (t) => {
      const a = await api.untilAnswered(
        () => api.send('setup', 'GET', `/api/v1/trades/${t.id}`, { token: tokenOf.get(t.offerer_id) }),
        Date.now() + RETRY_MS,
      );
      const shown = (a.body?.data as { attributes?: { state?: string } } | undefined)?.attributes?.state;
      if (t.state === 'failed' ? a.status !== 404 : a.status !== 200 || shown !== t.state)
        this.problem(`GET trade ${t.id} answered ${a.status} ${shown ?? a.code ?? ''}, the database holds ${t.state}`, 'wrong');
    });
  }

  /** Each collectible's copies in the app (owned + escrowed) as before the load. */
  async copiesKept(before: Map<string, number>): Promise<void> {
    const after = await copiesByCollectible(this.ctx, this.appId);
    for (const id of new Set([...before.keys(), ...after.keys()])) {
      const [b, a] = [before.get(id) ?? 0, after.get(id) ?? 0];
      this.copies.before += b;
      this.copies.after += a;
      if (a !== b) this.problem(`${id}: ${b} copies before the load, ${a} after`, a < b ? 'lost' : 'duplicated', Math.abs(a - b));
    }
  }

  /** Each balance its ledger's sum; each trade debit refunded once exactly when its trade did not complete with it (an open offer keeps its debit). */
  async coins(traders: Trader[]): Promise<void> {
    const off = await this.ctx.db.query<{ player_id: string; amount: string; ledger: string }>(
      `SELECT b.player_id, b.amount::text AS amount,
              COALESCE((SELECT sum(l.delta) FROM wallet.ledger l WHERE l.app_id = b.app_id AND l.player_id = b.player_id AND l.currency_id = b.currency_id), 0)::text AS ledger
         FROM wallet.balances b WHERE b.app_id = $1 AND b.player_id = ANY($2::uuid[])`,
      [this.appId, traders.map((t) => t.id)],
    );
    for (const r of off.rows)
      if (Number(r.amount) !== Number(r.ledger)) this.problem(`player ${r.player_id}: balance ${r.amount}, ledger sums to ${r.ledger}`, 'lost');
    const refs = await this.ctx.db.query<{ reference: string; debits: number; refunds: number }>(
      `SELECT reference, count(*) FILTER (WHERE reason = 'debit')::int AS debits, count(*) FILTER (WHERE reason = 'debit_refund')::int AS refunds
         FROM wallet.ledger WHERE app_id = $1 AND reference LIKE 'trade:%' GROUP BY reference`,
      [this.appId],
    );
    for (const r of refs.rows) {
      this.charged += r.debits;
      this.refunded += r.refunds;
      const [, id, step, attempt] = r.reference.split(':');
      const t = this.byId.get(id!);
      const kept =
        (t?.state === 'completed' && (step === 'offer' || Number(attempt) === t.accept_attempt)) || (t?.state === 'offered' && step === 'offer');
      const owed = r.debits === 1 && !kept ? 1 : 0;
      if (r.debits > 1 || r.refunds !== owed)
        this.problem(
          `${r.reference} (trade ${t?.state ?? 'absent'}): ${r.debits} debits, ${r.refunds} refunds, expected ${owed} refund`,
          r.debits > 1 || r.refunds > owed ? 'duplicated' : 'lost',
        );
    }
  }

  /** Stamina: the maximum less the offers that kept their point (open or completed); none comes back during the run. */
  async stamina(): Promise<void> {
    const rows = await this.ctx.db.query<{ player_id: string; stamina: number }>(
      'SELECT player_id, stamina FROM collections.trade_players WHERE app_id = $1',
      [this.appId],
    );
    for (const r of rows.rows) {
      const spent = this.trades.filter(
        (t) => t.offerer_id === r.player_id && t.stamina_spent && (t.state === 'offered' || t.state === 'completed'),
      ).length;
      if (r.stamina !== STAMINA - spent) this.problem(`player ${r.player_id}: stamina ${r.stamina}, expected ${STAMINA - spent}`, 'lost');
    }
  }
}

/** Kills each of KILLED in turn mid-load, each started again and ready, the next once the load answered `between` more requests. */
async function killInTurn(ctx: ChaosContext, load: Load, between: number): Promise<{ notes: string[]; downMs: number }> {
  const notes: string[] = [];
  let downMs = 0;
  for (const service of KILLED) {
    const t0 = Date.now();
    const answered = load.sent.length;
    await ctx.stack.kill(service);
    ctx.stack.start(service);
    await ctx.stack.waitReady(service, 60_000);
    downMs += Date.now() - t0;
    notes.push(
      `${service} killed with SIGKILL after ${answered} trade requests answered; ready again ${((Date.now() - t0) / 1000).toFixed(1)} s later`,
    );
    ctx.log(notes.at(-1)!);
    const at = load.sent.length;
    while (load.sent.length < at + between) await sleep(100);
  }
  return { notes, downMs };
}

/** The trading app, its traders and their copies per collectible before the load. */
async function prepare(ctx: ChaosContext, size: { pairs: number; chests: number }) {
  const app = await createTradingApp(ctx);
  const api = new Api(ctx.stack.base, app.publishableKey);
  api.onAnswer = ctx.api.onAnswer;
  const pairs = await setUp(api, size.pairs, size.chests);
  const traders = pairs.flat();
  const ids = traders.map((t) => t.id);
  const unsettled = await settle(ctx.db, ctx.nats.url, ctx.prefix, ids, 30_000, ctx.progress);
  if (unsettled) throw new Error(`the traders' openings did not settle: ${unsettled}`);
  await readHoldings(ctx, app.appId, traders);
  const before = await copiesByCollectible(ctx, app.appId);
  ctx.log(
    `${traders.length} traders in ${pairs.length} pairs of friends in app ${app.appId}, ${[...before.values()].reduce((a, b) => a + b, 0)} copies`,
  );
  api.take();
  return { appId: app.appId, api, pairs, traders, ids, before };
}

export const tradesUnderKills: Scenario = {
  name: 'trades under kill -9 of collections, wallet, chests',
  short: true,
  async run(ctx): Promise<ScenarioReport> {
    const size = ctx.short ? { pairs: 4, chests: 3, warmMs: 1000, between: 20 } : { pairs: 8, chests: 5, warmMs: 1500, between: 40 };
    const { appId, api, pairs, traders, ids, before } = await prepare(ctx, size);
    const load = new Load(api, pairs).start();
    await sleep(size.warmMs);
    const { notes, downMs } = await killInTurn(ctx, load, size.between);
    await load.stop();
    const answers = api.take();
    const unsettled = [await settle(ctx.db, ctx.nats.url, ctx.prefix, ids, 30_000, ctx.progress), await settleTrades(ctx, appId, 30_000)]
      .filter(Boolean)
      .join('; ');
    const truth = new TradeTruth(ctx, appId);
    await truth.states(load);
    await truth.api(api, traders);
    await truth.copiesKept(before);
    await truth.coins(traders);
    await truth.stamina();

    const fiveXX = tally(answers.filter((a) => a.status <= 0 || a.status >= 500).map((a) => `${a.status} ${a.code ?? ''}`.trim()));
    const refusals = tally(load.sent.filter((s) => s.last.status >= 400).map((s) => `${s.action} ${s.last.status} ${s.last.code ?? ''}`.trim()));
    const unknown = load.sent.filter((s) => s.last.status <= 0 || s.last.status >= 500).length;
    notes.push(
      `${load.sent.length} trade requests (${answers.length} with retries); trades by state: ${fmt(tally(truth.trades.map((t) => t.state)))}`,
      `copies (owned + escrowed) ${truth.copies.before} before the load, ${truth.copies.after} after; trade debits ${truth.charged}, refunds ${truth.refunded}`,
      `client-visible refusals (final answers): ${fmt(refusals)}; outcome unknown after ${RETRY_MS / 1000} s of retries: ${unknown}`,
    );
    return {
      attempted: load.sent.length,
      lost: truth.lost,
      duplicated: truth.duplicated,
      unknown,
      fiveXX,
      unexpected5xx: unexpectedUnderFault(fiveXX),
      wrongAnswers: truth.wrong,
      // The three kills' times away added (kill → the new process ready).
      downS: Math.round(downMs / 100) / 10,
      unsettled,
      notes,
      problems: truth.problems.slice(0, 12),
    };
  },
};
