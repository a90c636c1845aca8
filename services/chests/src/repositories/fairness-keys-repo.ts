import type { Queryable } from '@ccs/shared';

/**
 * The stored seed-encryption key named `id` (base64), stored as `candidate` first when there is
 * none: the first replica to need it generates it, the others read the same one.
 */
export async function storedFairnessKey(q: Queryable, id: string, candidate: string): Promise<string> {
  await q.query('INSERT INTO fairness_keys (id, key) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [id, candidate]);
  const r = await q.query<{ key: string }>('SELECT key FROM fairness_keys WHERE id = $1', [id]);
  return r.rows[0]!.key;
}
