import { randomUUID } from 'node:crypto';
import { createSigner } from 'fast-jwt';
import type { SigningKey } from './signing-keys.js';

/** What an access token says about its bearer. */
export interface AccessClaims {
  playerId: string;
  appId: string;
  anonymous: boolean;
  /** The refresh token family (login session) the token was issued in; logout revokes it. */
  sessionId: string;
}

/** Signs ES256 access tokens with claims sub, app, anon, sid, iss, aud, exp, iat, jti and header kid. */
export class AccessTokenSigner {
  private readonly sign: (payload: Record<string, unknown>) => string;

  constructor(key: SigningKey, opts: { issuer: string; audience: string }) {
    this.sign = createSigner({ key: key.privatePem, algorithm: 'ES256', kid: key.kid, iss: opts.issuer, aud: opts.audience });
  }

  /** A token valid for `ttlSeconds` from now. */
  issue(claims: AccessClaims, ttlSeconds: number): string {
    const now = Math.floor(Date.now() / 1000);
    return this.sign({
      sub: claims.playerId,
      app: claims.appId,
      anon: claims.anonymous,
      sid: claims.sessionId,
      jti: randomUUID(),
      iat: now,
      exp: now + ttlSeconds,
    });
  }
}
