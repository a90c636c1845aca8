/**
 * The drill's client (scripts/cluster/drill/): HTTP through the cluster's gateways in rotation, as
 * a load balancer spreads requests, and what a careful client does after a 5xx or a lost answer.
 */
import { randomUUID } from 'node:crypto';
import type { Cluster } from '../cluster.js';
import { sleep } from '../processes.js';

const JSONAPI = 'application/vnd.api+json';
const PASSWORD = 'Correct-Horse-9battery!';

export interface Answer {
  /** The HTTP status; 0: the connection failed or broke, -1: no answer within 20 s. */
  status: number;
  code?: string;
  /** The gateway that answered (or failed to). */
  via?: string;
  /** The Retry-After header, when the answer had one. */
  retryAfter?: string;
  body?: Record<string, unknown> & { data?: unknown; meta?: Record<string, unknown>; errors?: { code?: string }[] };
}

export interface Player {
  id: string;
  token: string;
  chests: string[];
}

export interface SendOptions {
  token?: string;
  body?: unknown;
  json?: boolean;
  key?: string;
}

export const ok = (a: Answer) => a.status >= 200 && a.status <= 299;

export class DrillClient {
  /** Gateways a load balancer no longer sends to (taken out before their SIGTERM, or when they die). */
  readonly outOfRotation = new Set<string>();
  /** The demo content's Wooden Chest and the coins currency (filled by `discover`). */
  wooden = '';
  coins = '';
  private next = 0;

  constructor(readonly cluster: Cluster) {}

  /** The gateways in rotation in turn, as a load balancer would spread requests. */
  gateway(): string {
    const urls = this.cluster.gatewayUrls.filter((u) => !this.outOfRotation.has(u));
    return urls[this.next++ % urls.length]!;
  }

  async send(method: string, path: string, opts: SendOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { apikey: this.cluster.apiKey, accept: JSONAPI };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = opts.json ? 'application/json' : JSONAPI;
    if (opts.key) headers['idempotency-key'] = opts.key;
    const via = this.gateway();
    try {
      const res = await fetch(via + path, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      const body = text ? (JSON.parse(text) as Answer['body']) : undefined;
      return { status: res.status, code: body?.errors?.[0]?.code, via, body, retryAfter: res.headers.get('retry-after') ?? undefined };
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      return { status: timedOut ? -1 : 0, code: timedOut ? 'client_timeout' : 'connection_failed', via };
    }
  }

  /** What a careful client does: the same request (same Idempotency-Key) again after a 5xx or a lost answer. */
  async untilAnswered(attempt: () => Promise<Answer>, seen: Answer[], boundMs = 60_000): Promise<Answer> {
    const deadline = Date.now() + boundMs;
    for (let i = 0; ; i++) {
      const a = await attempt();
      seen.push(a);
      const retry = a.status <= 0 || a.status >= 500 || a.code === 'idempotency_key_in_use';
      if (!retry || Date.now() > deadline) return a;
      await sleep(Math.min(100 * 2 ** i, 1000));
    }
  }

  /** The answer's document, or an error naming `what` when it is not a 2xx. */
  async must(what: string, a: Promise<Answer>): Promise<NonNullable<Answer['body']>> {
    const r = await a;
    if (!ok(r)) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body!;
  }

  async register(): Promise<Player> {
    const email = `cluster-${randomUUID()}@example.com`;
    const attributes = { email, password: PASSWORD, password_confirmation: PASSWORD };
    const body = await this.must(
      'register',
      this.untilAnswered(() => this.send('POST', '/api/v1/players/register', { body: { data: { type: 'player', attributes } } }), []),
    );
    const meta = body.meta as { access_token: string; welcome_bonus: { starter_chest: string } };
    return { id: (body.data as { id: string }).id, token: meta.access_token, chests: [meta.welcome_bonus.starter_chest] };
  }

  /**
   * A new player opens its starter chest; the chest is granted through the outbox and the chests
   * service, so it may land a moment after the registration's answer: tried again for 15 s while
   * it is not there. The player and the opening's answer.
   */
  async openStarterChest(): Promise<{ player: Player; opened: Answer }> {
    const player = await this.register();
    const deadline = Date.now() + 15_000;
    const open = () => this.send('POST', `/api/v1/chests/${player.chests[0]}/open`, { token: player.token, key: randomUUID() });
    let opened = await open();
    while (opened.code === 'chest_not_found' && Date.now() < deadline) {
      await sleep(200);
      opened = await open();
    }
    return { player, opened };
  }

  /** Finds the Wooden Chest in the catalog and the coins currency. */
  async discover(player: Player): Promise<void> {
    const catalog = await this.must('catalog', this.send('GET', '/api/v1/chests?page[limit]=100'));
    this.wooden = (catalog.data as { id: string; attributes: { name: string } }[]).find((c) => c.attributes.name === 'Wooden Chest')!.id;
    const currencies = await this.must('currencies', this.send('GET', '/api/v1/currencies', { token: player.token }));
    this.coins = (currencies.data as { id: string; attributes: { code: string } }[]).find((c) => c.attributes.code === 'coins')!.id;
  }

  /** Players with coins and `chests` wooden chests each (the starter chest is left closed). */
  async playersWithChests(n: number, chests: number): Promise<Player[]> {
    const players: Player[] = [];
    for (let i = 0; i < n; i++) players.push(await this.register());
    for (const p of players) {
      p.chests = [];
      const credit = { token: p.token, body: { amount: '100000' }, json: true, key: randomUUID() };
      await this.must('setup credit', this.send('POST', `/api/v1/currencies/${this.coins}/credit`, credit));
      for (let left = chests; left > 0; left -= 10) {
        const attributes = { currency: 'coins', quantity: Math.min(10, left) };
        const bought = await this.must(
          'purchase',
          this.send('POST', `/api/v1/chests/${this.wooden}/purchase`, {
            token: p.token,
            body: { data: { type: 'purchase', attributes } },
            key: randomUUID(),
          }),
        );
        p.chests.push(...(bought.data as { id: string }[]).map((c) => c.id));
      }
    }
    return players;
  }
}
