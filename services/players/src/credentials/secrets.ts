import { createHash, randomBytes } from 'node:crypto';

/** A new high-entropy secret (API key, refresh token): a readable prefix and 256 random bits. */
export function newSecret(prefix: 'pk' | 'sk' | 'rt'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/**
 * How secrets are stored: sha256 hex. High-entropy random values need no slow hash, and a plain
 * digest keeps the lookup by value a single indexed query.
 */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
