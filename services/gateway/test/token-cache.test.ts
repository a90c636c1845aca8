/**
 * The verified-token cache of the auth plugin: claims are reused for a short TTL and never past
 * the token's `exp`, keyed by the whole token, bounded in size (oldest out first), and forgotten
 * when the players service stops listing the key that verified them. The app check on a cache hit
 * is covered through the gateway by test/security/isolation.test.ts (a token used with its own
 * app first, then with another app's key, is still a 401).
 */
import { describe, expect, it } from 'vitest';
import { VerifiedTokenCache } from '../src/plugins/auth.js';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const NOW = 1_800_000_000_000;

function token(kid: string, claims: Record<string, unknown>, signature = 'c2lnbmF0dXJl') {
  return `${b64({ alg: 'ES256', typ: 'JWT', kid })}.${b64(claims)}.${signature}`;
}

function claims(exp: number, sub = 'p1') {
  return { sub, app: 'a1', iss: 'i', aud: 'a', exp, iat: exp - 900, jti: `j-${sub}` };
}

describe('verified token cache', () => {
  it('reuses claims within the TTL, and not after it', () => {
    const cache = new VerifiedTokenCache(60_000, 10);
    const c = claims(NOW / 1000 + 900);
    const t = token('k1', c);
    cache.set(t, c, NOW);
    expect(cache.get(t, NOW + 59_999)).toEqual(c);
    expect(cache.get(t, NOW + 60_000)).toEqual(c);
    expect(cache.get(t, NOW + 60_001)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never reuses a token past its exp (the verifier answers token_expired then)', () => {
    const cache = new VerifiedTokenCache(60_000, 10);
    const c = claims(NOW / 1000 + 10);
    const t = token('k1', c);
    cache.set(t, c, NOW);
    expect(cache.get(t, NOW + 10_000)).toEqual(c);
    expect(cache.get(t, NOW + 10_001)).toBeUndefined();
    // Already expired when verified (cannot happen through the verifier, but never stored).
    const old = claims(NOW / 1000 - 1, 'p2');
    cache.set(token('k1', old), old, NOW);
    expect(cache.size).toBe(0);
  });

  it('keys by the whole token: another payload under the same signature is not a hit', () => {
    const cache = new VerifiedTokenCache(60_000, 10);
    const c = claims(NOW / 1000 + 900);
    cache.set(token('k1', c), c, NOW);
    const forged = token('k1', { ...c, app: 'a2', exp: NOW / 1000 + 90_000 });
    expect(cache.get(forged, NOW)).toBeUndefined();
  });

  it('holds at most its bound, forgetting the oldest first', () => {
    const cache = new VerifiedTokenCache(60_000, 3);
    const tokens = [1, 2, 3, 4].map((i) => {
      const c = claims(NOW / 1000 + 900, `p${i}`);
      const t = token('k1', c);
      cache.set(t, c, NOW + i);
      return t;
    });
    expect(cache.size).toBe(3);
    expect(cache.get(tokens[0]!, NOW + 5)).toBeUndefined();
    for (const t of tokens.slice(1)) expect(cache.get(t, NOW + 5)?.sub).toBeDefined();
  });

  it('forgets the tokens of a kid the key set no longer lists', () => {
    const cache = new VerifiedTokenCache(60_000, 10);
    const c1 = claims(NOW / 1000 + 900, 'p1');
    const c2 = claims(NOW / 1000 + 900, 'p2');
    const [t1, t2] = [token('old-kid', c1), token('new-kid', c2)];
    cache.set(t1, c1, NOW);
    cache.set(t2, c2, NOW);
    cache.keepOnly(new Set(['new-kid']));
    expect(cache.get(t1, NOW)).toBeUndefined();
    expect(cache.get(t2, NOW)).toEqual(c2);
  });
});
