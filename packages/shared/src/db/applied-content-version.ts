import type { Queryable } from './pool.js';

/**
 * The content version of an app a content service has applied: its `apps` row (each content
 * service's schema has the same table, keyed by app id); null before any.
 */
export async function appliedContentVersion(q: Queryable, appId: string): Promise<number | null> {
  const { rows } = await q.query<{ content_version: number }>('SELECT content_version FROM apps WHERE app_id = $1', [appId]);
  return rows[0]?.content_version ?? null;
}
