/**
 * The trades scenario's app, players and load (scenarios/trades.ts): an app with permissive
 * trading created by the operator's command, pairs of friends holding the copies of their
 * openings, and pairs trading in a loop, each request keyed and sent again with its key after a
 * 5xx or a lost answer.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dataId, inParallel, type Actor, type Answer, type Api, type Listed } from './client.js';
import { email, type ChaosContext } from './context.js';
import { sleep } from './infra.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
export const STAMINA = 100;
/** How long one request is retried with its key before its outcome counts as unknown. */
export const RETRY_MS = 40_000;
const OPEN_STATES = ['offering', 'offered', 'accepting'];

/** The demo content with trading on for everything, no duplicate conversion (every copy kept). */
function tradingContent(): string {
  const c = JSON.parse(readFileSync(path.join(ROOT, 'packages/shared/content/default.json'), 'utf8')) as Record<string, unknown>;
  delete c.duplicates;
  const coin = { tradable: true, token_cost: 1 };
  c.trading = {
    enabled: true,
    friends_only: true,
    same_rarity: false,
    rarities: { common: coin, rare: coin, legendary: coin },
    token_currency: 'coins',
    stamina: { max: STAMINA, regen_hours: 720 },
    daily_offer_cap: 10_000,
  };
  return JSON.stringify(c, null, 2);
}

/** Creates the trading app with the operator's command (it waits until every service applied the content). */
export async function createTradingApp(ctx: ChaosContext): Promise<{ appId: string; publishableKey: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ccs-chaos-trades-'));
  const file = path.join(dir, 'content.json');
  writeFileSync(file, tradingContent());
  const args = [
    '--import',
    'tsx',
    '--conditions=development',
    'tools/admin/src/main.ts',
    'create-app',
    '--name',
    `Chaos trades ${randomUUID().slice(0, 6)}`,
  ];
  const child = spawn(process.execPath, [...args, '--content', file, '--json', '--wait', '60'], {
    cwd: ROOT,
    env: { ...process.env, ...ctx.stack.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`admin create-app failed (exit ${code}): ${err}${out}`.slice(0, 600));
  return JSON.parse(out) as { appId: string; publishableKey: string };
}

export interface Trader extends Actor {
  /** Copies it holds as far as the client knows: what it may offer and be asked for. */
  free: Map<string, number>;
}

/** One keyed request's record: its last answer (retried through 5xx and lost answers). */
export interface Sent {
  action: 'offer' | 'accept' | 'decline' | 'cancel';
  tradeId?: string;
  last: Answer;
}

const pick = <T>(xs: T[]): T | undefined => xs[Math.floor(Math.random() * xs.length)];
const held = (t: Trader) => [...t.free].filter(([, n]) => n > 0).map(([id]) => id);

/** The app's players, friends in pairs, each with the copies of its openings. */
export async function setUp(api: Api, pairs: number, chests: number): Promise<Trader[][]> {
  const traders: Trader[] = new Array(pairs * 2);
  // The app's coins and Wooden Chest ids, read once (the currencies need a player's token).
  const first = await api.newActor(email('trader'));
  const list = await api.must<Listed<{ code: string }>>('GET', '/api/v1/currencies', { token: first.token });
  api.coinsId = list.data.find((c) => c.attributes.code === 'coins')!.id;
  const catalog = await api.must<Listed<{ name: string }>>('GET', '/api/v1/chests?page[limit]=100');
  const woodenId = catalog.data.find((c) => c.attributes.name === 'Wooden Chest')!.id;
  await inParallel(4, Array.from({ length: pairs * 2 }), async (_, i) => {
    const a = i === 0 ? first : await api.newActor(email('trader'));
    await api.provision(a, woodenId, 100_000, chests);
    for (const chest of [a.starterChest, ...a.chests]) await api.must('POST', `/api/v1/chests/${chest}/open`, { token: a.token });
    traders[i] = { ...a, free: new Map() };
  });
  const out: Trader[][] = [];
  for (let i = 0; i < pairs; i++) {
    const [a, b] = [traders[2 * i]!, traders[2 * i + 1]!];
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const)
      await api.must('POST', '/api/v1/players/me/friends', { token: from.token, body: { data: { type: 'player', id: to.id } } });
    out.push([a, b]);
  }
  return out;
}

/** Each trader's holdings from the database (after its openings' grants landed). */
export async function readHoldings(ctx: ChaosContext, appId: string, traders: Trader[]): Promise<void> {
  const r = await ctx.db.query<{ player_id: string; collectible_id: string; copies: number }>(
    'SELECT player_id, collectible_id, copies FROM collections.player_collectibles WHERE app_id = $1',
    [appId],
  );
  for (const t of traders) t.free = new Map(r.rows.filter((x) => x.player_id === t.id).map((x) => [x.collectible_id, x.copies]));
}

/** Copies per collectible in the app: owned, and escrowed by trades not ended (give; want while accepting). */
export async function copiesByCollectible(ctx: ChaosContext, appId: string): Promise<Map<string, number>> {
  const r = await ctx.db.query<{ id: string; n: number }>(
    `SELECT id, sum(n)::int AS n FROM (
       SELECT collectible_id AS id, copies AS n FROM collections.player_collectibles WHERE app_id = $1
       UNION ALL SELECT give_id, 1 FROM collections.trades WHERE app_id = $1 AND state = ANY($2::text[])
       UNION ALL SELECT want_id, 1 FROM collections.trades WHERE app_id = $1 AND state = 'accepting') x GROUP BY id`,
    [appId, OPEN_STATES],
  );
  return new Map(r.rows.map((x) => [x.id, x.n]));
}

/** The load: each pair trading until `stop`; every request's last answer kept in `sent`. */
export class Load {
  readonly sent: Sent[] = [];
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly api: Api,
    private readonly pairs: Trader[][],
  ) {}

  private async keyed(action: Sent['action'], p: Actor, pathName: string, body?: unknown, tradeId?: string): Promise<Answer> {
    const key = randomUUID();
    const deadline = Date.now() + RETRY_MS;
    const send = () => this.api.send('trade', 'POST', pathName, { token: p.token, body, key });
    let last = await this.api.untilAnswered(send, deadline);
    // 409 trade_busy: the trade is mid-step (an earlier attempt of this request, cut off by a
    // kill, still under way); the answer says to ask again, as a client would.
    while (last.code === 'trade_busy' && Date.now() < deadline) {
      await sleep(200);
      last = await this.api.untilAnswered(send, deadline);
    }
    this.sent.push({ action, tradeId: tradeId ?? (action === 'offer' && last.status === 201 ? dataId(last) : undefined), last });
    return last;
  }

  private async round(a: Trader, b: Trader): Promise<void> {
    const [offerer, partner] = Math.random() < 0.5 ? [a, b] : [b, a];
    const give = pick(held(offerer));
    const want = pick(held(partner));
    if (!give || !want) return;
    const offered = await this.keyed('offer', offerer, '/api/v1/trades', {
      data: { type: 'trade', attributes: { give, want }, relationships: { partner: { data: { type: 'player', id: partner.id } } } },
    });
    const id = offered.status === 201 ? dataId(offered) : undefined;
    if (!id) return;
    offerer.free.set(give, offerer.free.get(give)! - 1);
    const roll = Math.random();
    if (roll < 0.1) return; // left open
    const [action, by] = roll < 0.6 ? (['accept', partner] as const) : roll < 0.8 ? (['decline', partner] as const) : (['cancel', offerer] as const);
    const answered = await this.keyed(action, by, `/api/v1/trades/${id}/${action}`, undefined, id);
    if (answered.status !== 200) return;
    if (action === 'accept') {
      partner.free.set(want, (partner.free.get(want) ?? 0) - 1);
      partner.free.set(give, (partner.free.get(give) ?? 0) + 1);
      offerer.free.set(want, (offerer.free.get(want) ?? 0) + 1);
    } else offerer.free.set(give, offerer.free.get(give)! + 1);
  }

  start(): this {
    this.running = Promise.all(
      this.pairs.map(async ([a, b]) => {
        while (!this.stopped) await this.round(a!, b!);
      }),
    ).then(() => undefined);
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}

/** Waits until no trade of the app is mid-step and no refund is owed; "" or what was still pending when nothing changed for `stillMs`. */
export async function settleTrades(ctx: ChaosContext, appId: string, stillMs: number): Promise<string> {
  let pending = 'not checked yet';
  let changedAt = Date.now();
  while (Date.now() - changedAt < stillMs) {
    const r = await ctx.db.query<{ mid: number; refunds: number }>(
      `SELECT (SELECT count(*) FROM collections.trades WHERE app_id = $1 AND state IN ('offering', 'accepting'))::int AS mid,
              (SELECT count(*) FROM collections.trade_refunds WHERE app_id = $1 AND done_at IS NULL)::int AS refunds`,
      [appId],
    );
    const { mid, refunds } = r.rows[0]!;
    if (!mid && !refunds) return '';
    const now = `${mid} trades mid-step, ${refunds} refunds owed`;
    if (now !== pending) {
      changedAt = Date.now();
      ctx.progress.mark(`settling trades: ${now}`);
    }
    pending = now;
    await sleep(250);
  }
  return pending;
}
