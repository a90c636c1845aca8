import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';

/** The issuers of Google's OIDC tokens (Pub/Sub push uses either spelling). */
export const GOOGLE_ISSUERS = ['https://accounts.google.com', 'accounts.google.com'];

/** Clock skew tolerated on `exp`, `iat` and `nbf`, in seconds. */
const CLOCK_TOLERANCE_S = 30;

/** What a push must carry: the audience set on the push subscription, and its service account. */
export interface ExpectedPush {
  audience: string;
  serviceAccountEmail: string;
}

/**
 * Why a push was refused: `missing` (no bearer token), `invalid` (bad signature, algorithm,
 * issuer, audience, email, unverified email, expired, malformed), or `unavailable` (Google's keys
 * could not be fetched in time: not the sender's fault, answer so that Pub/Sub retries).
 * `detail` is for logs.
 */
export type PushRefusal = { reason: 'missing' | 'invalid' | 'unavailable'; detail: string };

export type PushVerdict = { ok: true; claims: JWTPayload & { email: string } } | { ok: false; refusal: PushRefusal };

export interface PushVerifierOptions {
  /** STORE_GOOGLE_OIDC_JWKS_URL. */
  jwksUrl: string;
  /** STORE_GOOGLE_TIMEOUT_MS: the bound on one fetch of the keys. */
  timeoutMs: number;
}

function refuse(reason: PushRefusal['reason'], detail: string): PushVerdict {
  return { ok: false, refusal: { reason, detail } };
}

/** The bearer token of an Authorization header; '' when there is none, undefined when the header is not a bearer one. */
function bearerOf(header: string | undefined): string | undefined {
  const value = header?.trim() ?? '';
  if (value === '') return '';
  const match = /^Bearer[ \t]+(\S*)$/i.exec(value);
  return match ? match[1] : undefined;
}

/** A verification error as a refusal: the key set's fetch failures are `unavailable`, everything else `invalid`. */
function refusalOf(err: unknown): PushVerdict {
  if (err instanceof errors.JWKSTimeout) return refuse('unavailable', 'the OIDC keys did not arrive in time');
  if (err instanceof errors.JWKSInvalid || (err instanceof errors.JOSEError && err.code === 'ERR_JOSE_GENERIC')) {
    return refuse('unavailable', 'the OIDC keys could not be read');
  }
  if (err instanceof errors.JOSEError) return refuse('invalid', err.code);
  if (err instanceof TypeError) return refuse('unavailable', `the OIDC keys could not be fetched (${err.message})`);
  return refuse('invalid', 'not a token');
}

/**
 * Verifies the OIDC token Pub/Sub sends with a push (Authorization: Bearer <JWT>), as Google
 * documents push authentication: RS256 only, signed by one of Google's keys (the JWKS at
 * STORE_GOOGLE_OIDC_JWKS_URL, fetched with a timeout, cached, refetched at most every 30 s
 * for an unknown `kid`), `iss` accounts.google.com, `aud` the subscription's audience, `email`
 * its service account with `email_verified` true, and not expired (30 s of clock tolerance).
 */
export class PushVerifier {
  private readonly keys: ReturnType<typeof createRemoteJWKSet>;

  constructor(options: PushVerifierOptions) {
    this.keys = createRemoteJWKSet(new URL(options.jwksUrl), {
      timeoutDuration: options.timeoutMs,
      cooldownDuration: 30_000,
      cacheMaxAge: 6 * 3600_000,
    });
  }

  async verify(authorizationHeader: string | undefined, expected: ExpectedPush): Promise<PushVerdict> {
    const token = bearerOf(authorizationHeader);
    if (token === '') return refuse('missing', 'no bearer token');
    if (token === undefined) return refuse('invalid', 'the Authorization header is not a bearer token');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.keys, {
        algorithms: ['RS256'],
        issuer: GOOGLE_ISSUERS,
        audience: expected.audience,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp', 'iat', 'email'],
      }));
    } catch (err) {
      return refusalOf(err);
    }
    if (payload.email !== expected.serviceAccountEmail) return refuse('invalid', 'email is not the push subscription service account');
    if (payload.email_verified !== true) return refuse('invalid', 'email_verified is not true');
    return { ok: true, claims: payload as JWTPayload & { email: string } };
  }
}
