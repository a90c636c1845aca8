import fp from 'fastify-plugin';
import fastifyJwt from '@fastify/jwt';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, GetJwks, type Bus } from '@ccs/shared';

declare module 'fastify' {
  interface FastifyRequest {
    /** The player of a verified Bearer token. */
    player?: { id: string; anonymous: boolean };
    /** Why a presented token was refused (kept for routes that require a player). */
    authError?: AppError;
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

  constructor(private readonly bus: Bus) {}

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
      })
      .finally(() => (this.fetching = undefined));
    return this.fetching;
  }
}

const invalid = (detail: string) => AppError.unauthorized('invalid_token', detail);

/**
 * Verifies `Authorization: Bearer` tokens: ES256 only (the algorithm is pinned, so `alg: none`
 * and HMAC confusion fail), issuer and audience checked, expiry enforced, and the token's app
 * must be the app of the request's apikey. A presented but bad token is a 401 on any route.
 */
export default fp(
  async function auth(app: FastifyInstance, opts: { bus: Bus; issuer: string; audience: string }) {
    const store = new KeyStore(opts.bus);
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
    app.decorateRequest('authError', undefined);

    app.addHook('onRequest', async (request) => {
      const header = request.headers.authorization;
      if (header === undefined || !request.tenant) return;
      if (!/^Bearer [A-Za-z0-9._~+/-]+=*$/.test(header)) throw invalid('Use Authorization: Bearer <access token>.');
      let claims;
      try {
        claims = await request.jwtVerify<FastifyRequest["user"]>();
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === 'FST_JWT_AUTHORIZATION_TOKEN_EXPIRED') {
          throw AppError.unauthorized('token_expired', 'The access token has expired; refresh it or log in again.');
        }
        throw invalid('The access token is not valid.');
      }
      if (claims.app !== request.tenant.appId) throw invalid('The access token belongs to another app.');
      request.player = { id: claims.sub, anonymous: claims.anon === true };
    });
  },
  { name: 'auth', dependencies: ['tenancy'] },
);
