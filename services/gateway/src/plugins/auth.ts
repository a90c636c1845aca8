import fp from 'fastify-plugin';
import fastifyJwt from '@fastify/jwt';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { AppError, GetJwks, type Bus } from '@ccs/shared';
import { gatewayErrors } from '../errors.js';
import { PlayerLocks } from '../lib/player-locks.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The player of a verified Bearer token; always set on the player scope's routes. */
    player?: { id: string; anonymous: boolean };
  }
  interface FastifyInstance {
    /** onRequest hook of the app and player scopes: a Bearer token, when sent, is verified (401 if bad) → request.player. */
    verifyToken: onRequestHookHandler;
    /** onRequest hook of the player scope: no verified player → 401 missing_token. */
    requirePlayer: onRequestHookHandler;
  }
}

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: { sub: string; app: string; anon?: boolean };
    user: { sub: string; app: string; anon?: boolean; iss: string; aud: string; exp: number; iat: number; jti: string };
  }
}

/** Public keys of the players service, fetched over NATS and refreshed when a new kid appears. */
class KeyStore {
  private keys = new Map<string, string>();
  private lastFetch = 0;
  private fetching: Promise<void> | undefined;

  /** `onKeys` hears every fetched key set (the verified-token cache forgets kids no longer in it). */
  constructor(
    private readonly bus: Bus,
    private readonly onKeys: (kids: ReadonlySet<string>) => void = () => undefined,
  ) {}

  async publicKey(kid: string | undefined, requestId: string): Promise<string> {
    if (!kid) throw new Error('token has no kid');
    if (!this.keys.has(kid) && Date.now() - this.lastFetch > 5000) await this.refresh(requestId);
    const key = this.keys.get(kid);
    if (!key) throw new Error('unknown kid');
    return key;
  }

  private refresh(requestId: string): Promise<void> {
    this.fetching ??= this.bus
      .request(GetJwks, {}, { requestId })
      .then((jwks) => {
        this.keys = new Map(jwks.keys.map((k) => [k.kid, k.publicKeyPem]));
        this.lastFetch = Date.now();
        this.onKeys(new Set(this.keys.keys()));
      })
      .finally(() => (this.fetching = undefined));
    return this.fetching;
  }
}

const invalid = gatewayErrors.invalidToken;

/** `Authorization: Bearer <token>`: the scheme, then base64url/base64 characters (the token is checked by verification). */
const BEARER = /^Bearer [A-Za-z0-9._~+/-]+=*$/;

type Claims = FastifyRequest['user'];

/** How long a verified token's claims are reused, at most (never past its `exp`). */
export const TOKEN_CACHE_TTL_MS = 60_000;
/** Verified tokens remembered at once; the oldest is forgotten first. */
export const TOKEN_CACHE_MAX_ENTRIES = 10_000;

interface VerifiedToken {
  claims: Claims;
  /** The key that verified it: entries of a kid the players service no longer lists are dropped. */
  kid: string | undefined;
  /** Epoch ms up to which the claims may be reused: the TTL's end or the token's `exp`, the earlier. */
  reuseUntil: number;
}

/**
 * Claims of recently verified tokens, keyed by the whole token (never by its signature alone: a
 * payload re-encoded under a valid signature must not match). Only successful verifications are
 * stored; a hit past `reuseUntil` is dropped and the token verified again (so an expired one gets
 * its `token_expired` answer from the verifier, as before). The app check runs on every request.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, VerifiedToken>();

  constructor(
    private readonly ttlMs = TOKEN_CACHE_TTL_MS,
    private readonly maxEntries = TOKEN_CACHE_MAX_ENTRIES,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(token: string, now = Date.now()): Claims | undefined {
    const hit = this.entries.get(token);
    if (!hit) return undefined;
    if (now <= hit.reuseUntil) return hit.claims;
    this.entries.delete(token);
    return undefined;
  }

  set(token: string, claims: Claims, now = Date.now()): void {
    // fast-jwt accepts a token while now <= exp * 1000: never reuse it past that.
    const reuseUntil = Math.min(now + this.ttlMs, claims.exp * 1000);
    if (!(reuseUntil >= now)) return;
    if (this.entries.size >= this.maxEntries && !this.entries.has(token)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token, { claims: Object.freeze(claims), kid: kidOf(token), reuseUntil });
  }

  /** Forgets the tokens of keys no longer in the players service's key set. */
  keepOnly(kids: ReadonlySet<string>): void {
    for (const [token, entry] of this.entries) if (entry.kid === undefined || !kids.has(entry.kid)) this.entries.delete(token);
  }
}

/** The `kid` of a (verified) token's header. */
function kidOf(token: string): string | undefined {
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString());
    const kid = (header as { kid?: unknown } | null)?.kid;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Provides the hooks of the scopes (plugins/scopes.ts) that verify `Authorization: Bearer`
 * tokens: ES256 only (the algorithm is pinned, so `alg: none` and HMAC confusion fail), issuer and
 * audience checked, expiry enforced, and the token's app must be the app of the request's apikey.
 * A presented but bad token is a 401 on any route of those scopes. The token of a player the
 * studio locked is refused (403 player_locked), reads and writes alike, from the request after
 * the lock was answered, on every replica (lib/player-locks.ts).
 */
export default fp(
  async function auth(app: FastifyInstance, opts: { bus: Bus; issuer: string; audience: string; locksTtlMs: number }) {
    const locks = new PlayerLocks(opts.bus, opts.locksTtlMs);
    const stopLocks = locks.listen();
    app.addHook('onClose', async () => stopLocks());
    const verified = new VerifiedTokenCache();
    const store = new KeyStore(opts.bus, (kids) => verified.keepOnly(kids));
    await app.register(fastifyJwt, {
      // Verify-only: the key is looked up by the token's kid; the gateway never signs.
      secret: ((request: FastifyRequest, token: { header?: { kid?: string } }) => store.publicKey(token.header?.kid, request.id)) as never,
      // The secret callback needs the token's header (kid): decode the complete token for it.
      decode: { complete: true },
      verify: {
        algorithms: ['ES256'],
        allowedIss: opts.issuer,
        allowedAud: opts.audience,
        requiredClaims: ['sub', 'app', 'exp', 'iat', 'jti'],
      },
    });
    app.decorateRequest('player', undefined);
    app.decorate('verifyToken', verifyTokenHook(verified, locks));
    app.decorate('requirePlayer', requirePlayer);
  },
  { name: 'auth', dependencies: ['tenancy'] },
);

/** The request's player from verified claims: the token's app must be the apikey's app. */
function admit(request: FastifyRequest, appId: string, claims: Claims): void {
  if (claims.app !== appId) throw invalid('The access token belongs to another app.');
  request.player = { id: claims.sub, anonymous: claims.anon === true };
}

/** Verifies the token (401 token_expired or invalid_token), remembers its claims, admits its player. */
async function verify(request: FastifyRequest, token: string, appId: string, verified: VerifiedTokenCache): Promise<void> {
  let claims: Claims;
  try {
    claims = await request.jwtVerify<Claims>();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'FST_JWT_AUTHORIZATION_TOKEN_EXPIRED') {
      throw gatewayErrors.tokenExpired();
    }
    throw invalid('The access token is not valid.');
  }
  verified.set(token, claims);
  admit(request, appId, claims);
}

/** The app and player scopes' hook: a Bearer token, when sent, is verified (or its claims reused), then its player's lock checked. */
function verifyTokenHook(verified: VerifiedTokenCache, locks: PlayerLocks): onRequestHookHandler {
  return (request, _reply, done) => {
    const header = request.headers.authorization;
    if (header === undefined || !request.tenant) return done();
    if (!BEARER.test(header)) return done(invalid('Use Authorization: Bearer <access token>.'));
    const appId = request.tenant.appId;
    const token = header.slice(7);
    const unlessLocked = () =>
      locks.isLocked(appId, request.player!.id, request.id).then((locked) => done(locked ? gatewayErrors.playerLocked() : undefined), done);
    const claims = verified.get(token);
    if (claims === undefined) {
      verify(request, token, appId, verified).then(unlessLocked, done);
      return;
    }
    try {
      request.user = claims;
      admit(request, appId, claims);
    } catch (err) {
      return done(err as AppError);
    }
    void unlessLocked();
  };
}

/** The player scope's hook: no verified player → 401 missing_token. */
const requirePlayer: onRequestHookHandler = (request, _reply, done) => {
  if (!request.player) return done(gatewayErrors.missingToken());
  done();
};
