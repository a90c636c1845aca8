import type { Queryable } from '@ccs/shared';

/** An app's Google service-account key, sealed (AtRestCipher). */
export interface SealedGoogleCredentials {
  clientEmail: string;
  privateKeyId: string;
  sealedKey: string;
  updatedAt: Date;
}

export async function saveGoogleCredentials(q: Queryable, appId: string, c: Omit<SealedGoogleCredentials, 'updatedAt'>): Promise<void> {
  await q.query(
    `INSERT INTO google_credentials (app_id, client_email, private_key_id, sealed_key) VALUES ($1, $2, $3, $4)
     ON CONFLICT (app_id) DO UPDATE SET client_email = EXCLUDED.client_email, private_key_id = EXCLUDED.private_key_id,
       sealed_key = EXCLUDED.sealed_key, updated_at = now()`,
    [appId, c.clientEmail, c.privateKeyId, c.sealedKey],
  );
}

export async function findGoogleCredentials(q: Queryable, appId: string): Promise<SealedGoogleCredentials | undefined> {
  const r = await q.query<{ client_email: string; private_key_id: string; sealed_key: string; updated_at: Date }>(
    'SELECT client_email, private_key_id, sealed_key, updated_at FROM google_credentials WHERE app_id = $1',
    [appId],
  );
  const row = r.rows[0];
  return row && { clientEmail: row.client_email, privateKeyId: row.private_key_id, sealedKey: row.sealed_key, updatedAt: row.updated_at };
}

/** The development key of the credentials' encryption, stored as `candidate` first when there is none. */
export async function storedCredentialKey(q: Queryable, candidate: string): Promise<string> {
  await q.query("INSERT INTO credential_keys (id, key) VALUES ('default', $1) ON CONFLICT (id) DO NOTHING", [candidate]);
  const r = await q.query<{ key: string }>("SELECT key FROM credential_keys WHERE id = 'default'");
  return r.rows[0]!.key;
}
