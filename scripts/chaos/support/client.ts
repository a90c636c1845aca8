/**
 * The chaos run's HTTP client of the gateway: every answer recorded (status, error code, when),
 * network failures as status 0 and client timeouts as -1 (outcome unknown), and the retry loop a
 * well-behaved client runs: on a 5xx, a lost connection or a timeout it sends the same request
 * again with the same Idempotency-Key, after Retry-After when the answer gives one.
 */
import { randomUUID } from 'node:crypto';
import { sleep } from './infra.js';

export const JSONAPI = 'application/vnd.api+json';
export const PASSWORD = 'Chaos!pass1';

export type Kind = 'register' | 'credit' | 'open' | 'purchase' | 'trade' | 'setup';

export interface Answer {
  kind: Kind;
  /**
   * HTTP status; 0 = no HTTP answer (code connection_refused: nothing was sent, the gateway was
   * not listening; connection_failed: the connection broke, the outcome is unknown), -1 = no
   * answer within the client's timeout.
   */
  status: number;
  code?: string;
  /** The parsed JSON answer; `text` holds the start of a body that was not JSON. */
  body?: Doc;
  text?: string;
  retryAfter?: number;
  /** When it was sent and when it was answered (ms). */
  sentAt: number;
  at: number;
}

/** A JSON:API answer as the run reads it: nothing is validated, so any part may be missing. */
export interface Doc {
  data?: unknown;
  meta?: { purchase_id?: string; opening_id?: string; [field: string]: unknown };
  errors?: { code?: string }[];
}

const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The id of the answer's one resource (`data.id`). */
export const dataId = (a: Answer): string | undefined => text(record(a.body?.data).id);

/** The ids of the answer's resources (`data[].id`). */
export const dataIds = (a: Answer): string[] =>
  Array.isArray(a.body?.data) ? a.body.data.map((r) => text(record(r).id)).filter((id): id is string => id !== undefined) : [];

/** A credit's answer: the balance it left (`data.balance.amount`). */
export const balanceAmount = (a: Answer): string | undefined => text(record(record(a.body?.data).balance).amount);

/** A JSON:API list as a setup step reads it: ids and some attributes. */
export type Listed<A> = { data: { id: string; attributes: A }[] };

/** A registered player of the run. */
export interface Actor {
  id: string;
  email: string;
  token: string;
  starterChest: string;
  /** Unopened chests it holds that the run knows of. */
  chests: string[];
  /** Purchases made for it while setting up (not the scenario's). */
  setupPurchases: string[];
}

/** Whether a client should send the same request again (with the same key). */
export const retryable = (a: Answer) => a.status <= 0 || a.status >= 500 || a.code === 'idempotency_key_in_use';

export class Api {
  /** Every answer since the last `take()` (the scenario's record). */
  private answers: Answer[] = [];
  coinsId = '';
  /** Told of every answer (the run's progress). */
  onAnswer?: (a: Answer) => void;

  constructor(
    readonly base: string,
    readonly apiKey: string,
    private readonly timeoutMs = 20_000,
  ) {}

  take(): Answer[] {
    const a = this.answers;
    this.answers = [];
    return a;
  }

  async send(kind: Kind, method: string, path: string, opts: { token?: string; body?: unknown; json?: boolean; key?: string } = {}): Promise<Answer> {
    const headers: Record<string, string> = { apikey: this.apiKey, accept: JSONAPI };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = opts.json ? 'application/json' : JSONAPI;
    if (opts.key) headers['idempotency-key'] = opts.key;
    let a: Answer;
    const sentAt = Date.now();
    try {
      const res = await fetch(this.base + path, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await res.text();
      let body: Doc | undefined;
      let raw: string | undefined;
      try {
        body = text ? (JSON.parse(text) as Doc) : undefined;
      } catch {
        raw = text.slice(0, 300);
      }
      const ra = Number(res.headers.get('retry-after'));
      a = {
        kind,
        status: res.status,
        code: body?.errors?.[0]?.code,
        body,
        text: raw,
        retryAfter: Number.isFinite(ra) && ra > 0 ? ra : undefined,
        sentAt,
        at: Date.now(),
      };
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      const refused = (err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
      a = {
        kind,
        status: timedOut ? -1 : 0,
        code: timedOut ? 'client_timeout' : refused ? 'connection_refused' : 'connection_failed',
        sentAt,
        at: Date.now(),
      };
    }
    if (kind !== 'setup') this.answers.push(a);
    this.onAnswer?.(a);
    return a;
  }

  /**
   * Sends until the answer is not retryable or `deadline` passes; `send` must reuse its
   * Idempotency-Key. Returns the last answer (retryable only when the deadline passed).
   */
  async untilAnswered(send: () => Promise<Answer>, deadline: number): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      const a = await send();
      if (!retryable(a) || Date.now() > deadline) return a;
      const wait = a.retryAfter ? Math.min(a.retryAfter * 1000, 3000) : Math.min(100 * 2 ** attempt, 1000);
      await sleep(wait * (0.5 + Math.random() / 2));
    }
  }

  /**
   * A setup step that must succeed (retried through passing trouble for up to 60 s). Its
   * Idempotency-Keys start with `setup-`, so the ground truth tells its credits from a scenario's.
   */
  async must<T = Doc>(method: string, path: string, opts: { token?: string; body?: unknown; json?: boolean; key?: string } = {}): Promise<T> {
    const key = opts.key ?? (method === 'POST' ? `setup-${randomUUID()}` : undefined);
    const a = await this.untilAnswered(() => this.send('setup', method, path, { ...opts, key }), Date.now() + 60_000);
    if (a.status < 200 || a.status > 299)
      throw new Error(`setup: ${method} ${path} answered ${a.status} ${a.code ?? ''} ${JSON.stringify(a.body ?? a.text ?? '').slice(0, 300)}`);
    return a.body as T;
  }

  registrationBody(email: string) {
    return { data: { type: 'player', attributes: { email, password: PASSWORD, password_confirmation: PASSWORD }, relationships: {} } };
  }

  register(email: string, key: string, kind: Kind = 'register'): Promise<Answer> {
    return this.send(kind, 'POST', '/api/v1/players/register', { body: this.registrationBody(email), key });
  }

  credit(p: Actor, amount: string, key: string | undefined, kind: Kind = 'credit'): Promise<Answer> {
    return this.send(kind, 'POST', `/api/v1/currencies/${this.coinsId}/credit`, { token: p.token, body: { amount }, json: true, key });
  }

  purchase(p: Actor, chestTypeId: string, quantity: number, key?: string, kind: Kind = 'purchase'): Promise<Answer> {
    return this.send(kind, 'POST', `/api/v1/chests/${chestTypeId}/purchase`, {
      token: p.token,
      body: { data: { type: 'purchase', attributes: { currency: 'coins', quantity } } },
      key,
    });
  }

  open(p: Actor, chestId: string, key: string | undefined, method: 'GET' | 'POST' = 'POST'): Promise<Answer> {
    return this.send('open', method, `/api/v1/chests/${chestId}/open`, { token: p.token, key });
  }

  /** Registers a player (setup: must succeed). */
  async newActor(email: string): Promise<Actor> {
    type Registered = { data: { id: string }; meta: { access_token: string; welcome_bonus: { starter_chest: string } } };
    const body = await this.must<Registered>('POST', '/api/v1/players/register', { body: this.registrationBody(email) });
    const starter = body.meta.welcome_bonus.starter_chest;
    return { id: body.data.id, email, token: body.meta.access_token, starterChest: starter, chests: [], setupPurchases: [] };
  }

  /** Gives an actor `coins` (credits of at most 1,000,000) and `chests` wooden chests (bought 10 at a time). */
  async provision(p: Actor, woodenId: string, coins: number, chests: number): Promise<void> {
    for (let left = coins; left > 0; left -= 1_000_000) {
      await this.must('POST', `/api/v1/currencies/${this.coinsId}/credit`, {
        token: p.token,
        body: { amount: String(Math.min(left, 1_000_000)) },
        json: true,
      });
    }
    for (let left = chests; left > 0; left -= 10) {
      const body = await this.must<{ data: { id: string }[]; meta: { purchase_id: string } }>('POST', `/api/v1/chests/${woodenId}/purchase`, {
        token: p.token,
        body: { data: { type: 'purchase', attributes: { currency: 'coins', quantity: Math.min(10, left) } } },
      });
      for (const c of body.data) p.chests.push(c.id);
      p.setupPurchases.push(body.meta.purchase_id);
    }
  }
}

/** Runs `fn` over `items`, at most `n` at a time. */
export async function inParallel<T>(n: number, items: T[], fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}
