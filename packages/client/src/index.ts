/**
 * The typed client of the Collectible Chest Service: `api` is an openapi-fetch client over the
 * types generated from the gateway's OpenAPI document (schema.ts), so every path, parameter, body
 * and answer is checked by the compiler. The client adds what every game client needs:
 * - the app's `apikey` on every call, and the player's access token once signed in;
 * - on a 401 for an expired or invalid access token, one refresh and one retry (concurrent calls
 *   share the refresh);
 * - `Idempotency-Key`s for open, purchase and credit, so a retry after a lost answer is safe;
 * - JSON:API documents returned as typed objects, failures thrown as `ApiError`.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths };

const JSONAPI = 'application/vnd.api+json';
const REFRESH_PATH = '/api/v1/players/refresh';

/** A signed-in player's tokens. */
export interface Tokens {
  accessToken: string;
  refreshToken: string;
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
}

/** One JSON:API error object as the API sends it. */
export interface ApiErrorObject {
  status: string;
  code: string;
  title: string;
  detail?: string;
  source?: { pointer?: string; parameter?: string; header?: string };
  meta?: Record<string, unknown>;
}

/** A call the API refused or failed: the HTTP status and the JSON:API errors it answered with. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly errors: ApiErrorObject[],
  ) {
    super(errors.map((e) => `${e.status} ${e.code}: ${e.detail ?? e.title}`).join('; ') || `HTTP ${status}`);
  }

  /** The code of the first error (e.g. `insufficient_funds`). */
  get code(): string | undefined {
    return this.errors[0]?.code;
  }
}

/** The document of a successful call, or the ApiError of a failed one. */
function unwrap<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.response.ok && r.data !== undefined) return r.data;
  const errors = (r.error as { errors?: ApiErrorObject[] } | undefined)?.errors ?? [];
  throw new ApiError(r.response.status, errors);
}

/** A fresh Idempotency-Key: send the same one again to retry a call whose answer was lost. */
export const newIdempotencyKey = (): string => crypto.randomUUID();

/** Options of a call that takes an Idempotency-Key (a new one when none is given). */
export interface Idempotent {
  idempotencyKey?: string;
}

/** The sign-in documents, whose meta carries the tokens. */
type SessionMeta = { access_token: string; refresh_token: string };

export class ChestClient {
  /** The typed API: `client.api.GET('/api/v1/chests', …)`. Credentials are added for you. */
  readonly api: Client<paths>;
  private tokens: Tokens | undefined;
  private refreshing: Promise<boolean> | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: ChestClientOptions) {
    this.tokens = opts.tokens;
    this.fetchImpl = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.api = createClient<paths>({
      baseUrl: opts.baseUrl.replace(/\/$/, ''),
      headers: { accept: JSONAPI, 'content-type': JSONAPI },
      fetch: (request: Request) => this.send(request),
    });
  }

  /** The signed-in player's tokens, if any. */
  get session(): Tokens | undefined {
    return this.tokens;
  }

  private setTokens(tokens: Tokens | undefined): void {
    this.tokens = tokens;
    this.opts.onTokens?.(tokens);
  }

  private signedIn<T extends { meta?: unknown }>(doc: T): T {
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

  /** Sends a request with the credentials; an expired or invalid token is refreshed once and the request retried once. */
  private async send(request: Request): Promise<Response> {
    const again = request.clone();
    const first = await this.fetchImpl(this.withCredentials(request));
    if (first.status !== 401 || !this.tokens || new URL(request.url).pathname === REFRESH_PATH) return first;
    const code = (
      (await first
        .clone()
        .json()
        .catch(() => undefined)) as { errors?: ApiErrorObject[] } | undefined
    )?.errors?.[0]?.code;
    if (code !== 'token_expired' && code !== 'invalid_token') return first;
    if (!(await this.refresh())) return first;
    again.headers.delete('authorization');
    return this.fetchImpl(this.withCredentials(again));
  }

  /** Trades the refresh token for new tokens (once for concurrent callers); false when refused (signed out). */
  refresh(): Promise<boolean> {
    const refreshToken = this.tokens?.refreshToken;
    if (!refreshToken) return Promise.resolve(false);
    this.refreshing ??= this.api
      .POST('/api/v1/players/refresh', { body: { data: { type: 'session', attributes: { refresh_token: refreshToken } } } })
      .then((r) => {
        if (!r.response.ok || !r.data) {
          this.setTokens(undefined);
          return false;
        }
        this.signedIn(r.data);
        return true;
      })
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Registers a player and signs in as them. */
  async register(email: string, password: string) {
    const body = { data: { type: 'player' as const, attributes: { email, password, password_confirmation: password }, relationships: {} } };
    return this.signedIn(unwrap(await this.api.POST('/api/v1/players/register', { body })));
  }

  /** Signs in with email and password. */
  async login(email: string, password: string) {
    return this.signedIn(
      unwrap(await this.api.POST('/api/v1/players/login', { body: { data: { type: 'player', attributes: { email, password } } } })),
    );
  }

  /** Plays as a new guest (registering later keeps their progress). */
  async guest() {
    return this.signedIn(unwrap(await this.api.POST('/api/v1/players/anonymous', {})));
  }

  /** Signs out: the session is revoked and the tokens forgotten. */
  async logout(): Promise<void> {
    const refresh_token = this.tokens?.refreshToken;
    await this.api.POST('/api/v1/players/logout', { body: { data: { type: 'session', attributes: refresh_token ? { refresh_token } : {} } } });
    this.setTokens(undefined);
  }

  /** The signed-in player. */
  async me() {
    return unwrap(await this.api.GET('/api/v1/players/me', {}));
  }

  /** The chest catalog (first page of up to 100). */
  async catalog() {
    return unwrap(await this.api.GET('/api/v1/chests', { params: { query: { page: { limit: 100, offset: 0 } } } }));
  }

  /** The currencies, with the signed-in player's balances. */
  async currencies() {
    return unwrap(await this.api.GET('/api/v1/currencies', {}));
  }

  /** The signed-in player's unopened chests. */
  async inventory() {
    return unwrap(await this.api.GET('/api/v1/players/{id}/chests', { params: { path: { id: 'me' } } }));
  }

  /** The signed-in player's collection. */
  async collection() {
    return unwrap(await this.api.GET('/api/v1/players/me/collection', {}));
  }

  /** Buys `quantity` chests of a catalog chest with a currency code; safe to retry with the same key. */
  async purchase(chestTypeId: string, currency: string, quantity = 1, o: Idempotent = {}) {
    return unwrap(
      await this.api.POST('/api/v1/chests/{id}/purchase', {
        params: { path: { id: chestTypeId }, header: { 'Idempotency-Key': o.idempotencyKey ?? newIdempotencyKey() } },
        body: { data: { type: 'purchase', attributes: { currency, quantity } } },
      }),
    );
  }

  /** Opens one of the player's chests; safe to retry with the same key (the same result comes back). */
  async open(chestId: string, o: Idempotent = {}) {
    return unwrap(
      await this.api.POST('/api/v1/chests/{id}/open', {
        params: { path: { id: chestId }, header: { 'Idempotency-Key': o.idempotencyKey ?? newIdempotencyKey() } },
      }),
    );
  }

  /** Credits the player's balance (plain JSON, as the spec has it); safe to retry with the same key. */
  async credit(currencyId: string, amount: string, o: Idempotent = {}) {
    return unwrap(
      await this.api.POST('/api/v1/currencies/{currency_id}/credit', {
        params: { path: { currency_id: currencyId }, header: { 'Idempotency-Key': o.idempotencyKey ?? newIdempotencyKey() } },
        body: { amount },
        headers: { 'content-type': 'application/json' },
      }),
    );
  }
}

/** A client of one app; see ChestClient. */
export const createChestClient = (opts: ChestClientOptions): ChestClient => new ChestClient(opts);
