import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { ConfigError, withTransaction, type Logger, type Pool } from '@ccs/shared';
import { insertSigningKey, listSigningKeys, lockSigningKeys } from '../repositories/signing-keys-repo.js';

/** An ES256 key pair and its key id (the `kid` header of every token it signs). */
export interface SigningKey {
  kid: string;
  privatePem: string;
  publicPem: string;
}

/** The key that signs new tokens, and every key whose tokens the gateway should still accept. */
export interface KeyRing {
  active: SigningKey;
  verifying: { kid: string; publicPem: string }[];
}

/** Key id: a thumbprint of the public key (sha256 of its SPKI DER, base64url, 22 chars). */
export function keyId(publicPem: string): string {
  const der = createPublicKey(publicPem).export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64url').slice(0, 22);
}

/** A configured key pair; it must be P-256, and a given public key must belong to the private one. */
export function keyFromPem(privatePem: string, publicPem?: string): SigningKey {
  let derived: string;
  try {
    const priv = createPrivateKey(privatePem);
    if (priv.asymmetricKeyType !== 'ec' || priv.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      throw new ConfigError('JWT_PRIVATE_KEY must be an EC P-256 (ES256) private key.');
    }
    derived = createPublicKey(priv).export({ type: 'spki', format: 'pem' }).toString();
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError('JWT_PRIVATE_KEY is not a readable PEM private key.');
  }
  if (publicPem && keyId(publicPem) !== keyId(derived)) {
    throw new ConfigError('JWT_PUBLIC_KEY does not belong to JWT_PRIVATE_KEY.');
  }
  return { kid: keyId(derived), privatePem, publicPem: derived };
}

function generateKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return { kid: keyId(publicPem), privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicPem };
}

/**
 * The signing keys: the configured JWT_PRIVATE_KEY when set, else the newest key stored in the
 * schema, generated on first start under an advisory lock so every replica signs with the same key.
 * Stored keys stay in the verifying set, so tokens signed before a key change stay valid.
 */
export async function loadKeyRing(pool: Pool, configured: { privatePem?: string; publicPem?: string }, log: Logger): Promise<KeyRing> {
  const stored = await withTransaction(pool, async (tx) => {
    await lockSigningKeys(tx);
    const rows = await listSigningKeys(tx);
    if (rows.length > 0 || configured.privatePem) return rows;
    const key = generateKey();
    await insertSigningKey(tx, key);
    log.info({ kid: key.kid }, 'generated an ES256 signing key for access tokens (set JWT_PRIVATE_KEY to manage it yourself)');
    return [{ kid: key.kid, private_pem: key.privatePem, public_pem: key.publicPem }];
  });
  const first = stored[0];
  const active = configured.privatePem
    ? keyFromPem(configured.privatePem, configured.publicPem)
    : { kid: first!.kid, privatePem: first!.private_pem, publicPem: first!.public_pem };
  const verifying = [{ kid: active.kid, publicPem: active.publicPem }];
  for (const row of stored) if (row.kid !== active.kid) verifying.push({ kid: row.kid, publicPem: row.public_pem });
  return { active, verifying };
}
