import type { Queryable } from './pool.js';

/** The connection's search_path as Postgres reports it (e.g. `"players", public`). */
export async function currentSearchPath(q: Queryable): Promise<string> {
  const { rows } = await q.query<{ p: string }>("SELECT current_setting('search_path') AS p");
  return rows[0]!.p;
}

/** One round trip to Postgres (readiness, start-up checks); throws when it does not answer. */
export async function pingDatabase(q: Queryable): Promise<void> {
  await q.query('SELECT 1');
}
