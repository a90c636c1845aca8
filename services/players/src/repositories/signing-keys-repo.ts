import type { Queryable } from '@ccs/shared';

/** A stored ES256 key pair (the keys are the service's own, not an app's). */
export interface SigningKeyRow {
  kid: string;
  private_pem: string;
  public_pem: string;
}

/** Takes the transaction's lock on the signing keys, so replicas starting together generate one key. */
export async function lockSigningKeys(tx: Queryable): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('players.signing_keys'))");
}

/** Every stored signing key, newest first. */
export async function listSigningKeys(q: Queryable): Promise<SigningKeyRow[]> {
  const { rows } = await q.query<SigningKeyRow>('SELECT kid, private_pem, public_pem FROM signing_keys ORDER BY created_at DESC, kid');
  return rows;
}

/** Stores a new signing key. */
export async function insertSigningKey(tx: Queryable, key: { kid: string; privatePem: string; publicPem: string }): Promise<void> {
  await tx.query('INSERT INTO signing_keys (kid, private_pem, public_pem) VALUES ($1, $2, $3)', [key.kid, key.privatePem, key.publicPem]);
}
