import createClient, { type Client } from 'openapi-fetch';
import { apiErrorOf, retryAfterOf, type ApiErrorObject } from './errors.js';
import type { paths } from './schema.js';

const JSONAPI = 'application/vnd.api+json';
const REFRESH_PATH = '/api/v1/players/refresh';
/** POSTs that are safe to repeat without an Idempotency-Key: a store transaction grants once, a repeat answers the first grant. */
const REPEATABLE_POSTS = new Set(['/api/v1/players/me/store/purchases']);
/** The refresh endpoint's 401s about the app's key, not the refresh token: they sign nobody out. */
const API_KEY_CODES = new Set(['missing_api_key', 'invalid_api_key']);

/** A signed-in player's tokens. */
export interface Tokens {
  accessToken: string;
  refreshToken: string;
}

/** How the client waits on a `Retry-After` before it gives the error to the caller. */
export interface RetryOptions {
  /** Retries of one call at most (0: never wait). Default 2. */
  attempts?: number;
  /** The most one call waits in all, in milliseconds: a longer `Retry-After` is thrown at once. Default 3000. */
  maxDelayMs?: number;
}

export interface ChestClientOptions {
  /** Where the gateway listens, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** The app's publishable key (its secret key for studio tools). */
  apiKey: string;
  /** Tokens of a player signed in before (restored from the game's own storage). */
  tokens?: Tokens;
  /** Hears every change of the tokens (sign-in, refresh, sign-out), e.g. to store them. */
  onTokens?: (tokens: Tokens | undefined) => void;
  /** The fetch to use (the global one by default). */
  fetch?: typeof fetch;
  /** Waiting on `Retry-After` (429, 503) for calls safe to repeat; `false` never waits. */
  retry?: RetryOptions | false;
}

/** The sign-in documents, whose meta carries the tokens. */
type SessionMeta = { access_token: string; refresh_token: string };

/** How a refresh ended: new tokens, the refresh token refused (signed out), or a failure to retry later. */
type RefreshOutcome = { ok: true } | { ok: false; refused: true } | { ok: false; refused: false; status: number; headers: Headers; body: string };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The credentials, the refresh and the bounded retries of every call; ChestClient adds the named
 * operations on top.
 */
export class ChestSession {
  /** The typed API: `client.api.GET('/api/v1/chests', …)`. Credentials, refresh and retries are added for you. */
  readonly api: Client<paths>;
  private tokens: Tokens | undefined;
  private refreshing: Promise<RefreshOutcome> | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly baseUrl: string;
  private readonly retry: Required<RetryOptions>;

  constructor(private readonly opts: ChestClientOptions) {
    this.tokens = opts.tokens;
    this.fetchImpl = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.baseUrl = opts.baseUrl.replace(/\/$/, '');
    const retry = opts.retry === false ? { attempts: 0, maxDelayMs: 0 } : (opts.retry ?? {});
    this.retry = { attempts: Math.max(0, retry.attempts ?? 2), maxDelayMs: Math.max(0, retry.maxDelayMs ?? 3000) };
    this.api = createClient<paths>({
      baseUrl: this.baseUrl,
      headers: { accept: JSONAPI, 'content-type': JSONAPI },
      fetch: (request: Request) => this.send(request),
    });
  }

  /** The signed-in player's tokens, if any. */
  get session(): Tokens | undefined {
    return this.tokens;
  }

  protected setTokens(tokens: Tokens | undefined): void {
    this.tokens = tokens;
    this.opts.onTokens?.(tokens);
  }

  protected signedIn<T extends { meta?: unknown }>(doc: T): T {
    const meta = doc.meta as SessionMeta;
    this.setTokens({ accessToken: meta.access_token, refreshToken: meta.refresh_token });
    return doc;
  }

  private withCredentials(request: Request): Request {
    request.headers.set('apikey', this.opts.apiKey);
    // The refresh call carries only the refresh token: a stale access token beside it would be refused.
    const refreshing = new URL(request.url).pathname === REFRESH_PATH;
    if (this.tokens && !refreshing && !request.headers.has('authorization'))
      request.headers.set('authorization', `Bearer ${this.tokens.accessToken}`);
    return request;
  }

  /**
   * Sends a request; on a 429 or 503 with a `Retry-After`, waits and sends it again when it is safe
   * to repeat (a GET, a POST with an Idempotency-Key, or a POST that is idempotent by itself), at most `retry.attempts` times and
   * `retry.maxDelayMs` in all; otherwise the answer goes to the caller as it is.
   */
  private async send(request: Request): Promise<Response> {
    const safe =
      request.method === 'GET' ||
      (request.method === 'POST' && (request.headers.has('idempotency-key') || REPEATABLE_POSTS.has(new URL(request.url).pathname)));
    let waitedMs = 0;
    for (let attempt = 0; ; attempt++) {
      const spare = safe && attempt < this.retry.attempts ? request.clone() : undefined;
      const response = await this.sendOnce(request);
      if (!spare || (response.status !== 429 && response.status !== 503)) return response;
      const seconds = retryAfterOf(response.headers);
      if (seconds === undefined || waitedMs + seconds * 1000 > this.retry.maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(seconds * 1000);
      waitedMs += seconds * 1000;
      request = spare;
    }
  }

  /** Sends a request with the credentials; an expired or invalid token is refreshed once and the request retried once. */
  private async sendOnce(request: Request): Promise<Response> {
    const again = request.clone();
    const sentToken = this.tokens?.accessToken;
    const first = await this.fetchImpl(this.withCredentials(request));
    if (first.status !== 401 || !this.tokens || new URL(request.url).pathname === REFRESH_PATH) return first;
    const code = (
      (await first
        .clone()
        .json()
        .catch(() => undefined)) as { errors?: ApiErrorObject[] } | undefined
    )?.errors?.[0]?.code;
    if ((code !== 'token_expired' && code !== 'invalid_token') || !this.tokens) return first;
    // Another call refreshed meanwhile: the new token needs no refresh of its own.
    if (this.tokens.accessToken === sentToken) {
      const outcome = await this.refreshOutcome();
      if (!outcome.ok) {
        if (outcome.refused) return first;
        // The refresh failed for a while: the caller gets its answer (e.g. 503 with Retry-After) and keeps the tokens.
        const headers = new Headers(outcome.headers);
        headers.delete('content-encoding');
        headers.delete('content-length');
        return new Response(outcome.body, { status: outcome.status, headers });
      }
    }
    await first.body?.cancel();
    again.headers.delete('authorization');
    return this.fetchImpl(this.withCredentials(again));
  }

  /** One refresh at a time, shared by concurrent callers. */
  private refreshOutcome(): Promise<RefreshOutcome> {
    const refreshToken = this.tokens?.refreshToken;
    if (!refreshToken) return Promise.resolve({ ok: false, refused: true });
    this.refreshing ??= (async (): Promise<RefreshOutcome> => {
      const request = new Request(`${this.baseUrl}${REFRESH_PATH}`, {
        method: 'POST',
        headers: { accept: JSONAPI, 'content-type': JSONAPI, apikey: this.opts.apiKey },
        body: JSON.stringify({ data: { type: 'session', attributes: { refresh_token: refreshToken } } }),
      });
      const response = await this.fetchImpl(request);
      const body = await response.text();
      const doc = (() => {
        try {
          return JSON.parse(body) as { meta?: SessionMeta; errors?: ApiErrorObject[] };
        } catch {
          return undefined;
        }
      })();
      if (response.ok && doc?.meta?.access_token && doc.meta.refresh_token) {
        this.signedIn(doc);
        return { ok: true };
      }
      if (response.status === 401 && !API_KEY_CODES.has(doc?.errors?.[0]?.code ?? '')) {
        // The refresh token itself is refused (invalid, expired, revoked or reused): signed out,
        // unless another sign-in replaced it meanwhile.
        if (this.tokens?.refreshToken === refreshToken) this.setTokens(undefined);
        return { ok: false, refused: true };
      }
      return { ok: false, refused: false, status: response.status, headers: response.headers, body };
    })().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /**
   * Trades the refresh token for new tokens (once for concurrent callers). True when refreshed;
   * false when there is no session or the API refused the refresh token (then signed out). Any
   * other failure (429, 503, 504, the network) keeps the tokens and throws (an ApiError with
   * `retryAfter` when the API said): try again later.
   */
  async refresh(): Promise<boolean> {
    const outcome = await this.refreshOutcome();
    if (outcome.ok) return true;
    if (outcome.refused) return false;
    let doc: unknown;
    try {
      doc = JSON.parse(outcome.body);
    } catch {
      doc = undefined;
    }
    throw apiErrorOf(new Response(null, { status: outcome.status, headers: outcome.headers }), doc);
  }
}
