import { importPKCS8, SignJWT } from 'jose';
import { z } from 'zod';
import { exchange, fail, jsonOf, retryAfterSeconds, type GoogleFailure, type GoogleResult } from './http.js';
import type { ServiceAccountKey } from './service-account.js';

/** The OAuth scope of the Google Play Developer API. */
export const ANDROID_PUBLISHER_SCOPE = 'https://www.googleapis.com/auth/androidpublisher';

/** RFC 7523's grant type for a JWT bearer assertion. */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** How long an assertion is valid: Google accepts at most one hour after `iat`. */
const ASSERTION_LIFETIME_S = 3600;

/** The token endpoint's answer: an access token and its lifetime in seconds (other fields ignored). */
export const AccessTokenAnswerSchema = z.object({
  access_token: z.string().min(1).max(4096),
  expires_in: z.number().int().positive(),
  token_type: z.string().regex(/^bearer$/i),
});

export interface GoogleAccessTokensOptions {
  /** STORE_GOOGLE_TOKEN_URL: where assertions are sent, and their `aud`. */
  tokenUrl: string;
  /** STORE_GOOGLE_TIMEOUT_MS: the bound on one token request. */
  timeoutMs: number;
  /** The clock (ms); a test may move it. */
  now?: () => number;
}

interface Cached {
  token: string;
  /** When to stop using it: shortly before Google's expiry. */
  refreshAt: number;
}

/** When a token of `expiresInS` seconds, received at `now`, is renewed: a minute early, or halfway for a short one. */
function refreshAtOf(now: number, expiresInS: number): number {
  const lifetimeMs = expiresInS * 1000;
  return now + lifetimeMs - Math.min(60_000, lifetimeMs / 2);
}

/** Settles with the promise, or with `unavailable` once the signal aborts (the shared request keeps going for the others). */
function withDeadline<T>(promise: Promise<GoogleResult<T>>, signal: AbortSignal | undefined): Promise<GoogleResult<T>> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(fail({ kind: 'unavailable', detail: 'timeout' }));
  return new Promise((resolve) => {
    const onAbort = () => resolve(fail({ kind: 'unavailable', detail: 'timeout' }));
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then((r) => {
      signal.removeEventListener('abort', onAbort);
      resolve(r);
    });
  });
}

/** How the token endpoint's refusal maps: 4xx (invalid_grant, invalid_client...) is the key's fault; 408, 429 and 5xx are Google's. */
function tokenEndpointFailure(status: number, retryAfter: string | null, error: string): GoogleFailure {
  const detail = error ? `token endpoint HTTP ${status} ${error}` : `token endpoint HTTP ${status}`;
  if (status === 408 || status === 429 || status >= 500) {
    const retry = retryAfterSeconds(retryAfter);
    return retry === undefined ? { kind: 'unavailable', detail } : { kind: 'unavailable', detail, retryAfterSeconds: retry };
  }
  if (status >= 400) return { kind: 'credentials_rejected', detail };
  return { kind: 'malformed', detail: `unexpected ${detail}` };
}

/**
 * OAuth 2.0 access tokens for service accounts, by the JWT bearer grant (RFC 7523) as Google
 * documents it for server-to-server applications: an RS256 assertion {iss: client_email, scope,
 * aud: the token URL, iat, exp ≤ iat + 1 h} with `kid` = private_key_id, POSTed form-encoded to
 * the token endpoint. A token is cached per key (client_email + private_key_id) until shortly
 * before it expires; concurrent callers for one key share one request; failures are not cached.
 */
export class GoogleAccessTokens {
  private readonly cache = new Map<string, Cached>();
  private readonly inFlight = new Map<string, Promise<GoogleResult<string>>>();
  private readonly now: () => number;

  constructor(private readonly options: GoogleAccessTokensOptions) {
    this.now = options.now ?? Date.now;
  }

  private static keyOf(key: ServiceAccountKey): string {
    return `${key.clientEmail}\n${key.privateKeyId}`;
  }

  /** An access token for the key: the cached one, or a new one (within `signal`'s deadline, when given). */
  get(key: ServiceAccountKey, signal?: AbortSignal): Promise<GoogleResult<string>> {
    const id = GoogleAccessTokens.keyOf(key);
    const cached = this.cache.get(id);
    if (cached && cached.refreshAt > this.now()) return Promise.resolve({ ok: true, value: cached.token });
    let shared = this.inFlight.get(id);
    if (!shared) {
      shared = this.fetchToken(id, key).finally(() => this.inFlight.delete(id));
      this.inFlight.set(id, shared);
    }
    return withDeadline(shared, signal);
  }

  /** Forgets the key's cached token if it is `token` (Google refused it: expired or revoked early). */
  invalidate(key: ServiceAccountKey, token: string): void {
    const id = GoogleAccessTokens.keyOf(key);
    if (this.cache.get(id)?.token === token) this.cache.delete(id);
  }

  private async assertion(key: ServiceAccountKey): Promise<string> {
    const privateKey = await importPKCS8(key.privateKeyPem(), 'RS256');
    const iat = Math.floor(this.now() / 1000);
    return new SignJWT({ scope: ANDROID_PUBLISHER_SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.privateKeyId })
      .setIssuer(key.clientEmail)
      .setAudience(this.options.tokenUrl)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ASSERTION_LIFETIME_S)
      .sign(privateKey);
  }

  private async fetchToken(id: string, key: ServiceAccountKey): Promise<GoogleResult<string>> {
    let assertion: string;
    try {
      assertion = await this.assertion(key);
    } catch {
      return fail({ kind: 'credentials_rejected', detail: 'the private key cannot sign an RS256 assertion' });
    }
    const answered = await exchange({
      method: 'POST',
      url: this.options.tokenUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion }).toString(),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    if (!answered.ok) return answered;
    const { status, headers, body } = answered.value;
    const json = jsonOf(body);
    if (status < 200 || status >= 300) {
      const error = (json as { error?: unknown } | undefined)?.error;
      return fail(tokenEndpointFailure(status, headers.get('retry-after'), typeof error === 'string' ? error.slice(0, 64) : ''));
    }
    const parsed = AccessTokenAnswerSchema.safeParse(json);
    if (!parsed.success) return fail({ kind: 'malformed', detail: 'token endpoint answer is not an access token' });
    this.store(id, { token: parsed.data.access_token, refreshAt: refreshAtOf(this.now(), parsed.data.expires_in) });
    return { ok: true, value: parsed.data.access_token };
  }

  private store(id: string, entry: Cached): void {
    if (this.cache.size >= 1000) {
      const now = this.now();
      for (const [k, v] of this.cache) if (v.refreshAt <= now) this.cache.delete(k);
    }
    this.cache.set(id, entry);
  }
}
