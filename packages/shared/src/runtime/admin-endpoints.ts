import { adminContentVersion, type CONTENT_SERVICES } from '../contracts/admin.js';
import type { Pool, Queryable } from '../db/pool.js';
import { endpoint } from './endpoint.js';

/** The content version of an app a content service has applied (its `apps` row; null before any). */
export async function appliedContentVersion(q: Queryable, appId: string): Promise<number | null> {
  const { rows } = await q.query<{ content_version: number }>('SELECT content_version FROM apps WHERE app_id = $1', [appId]);
  return rows[0]?.content_version ?? null;
}

/**
 * The operator command every content service answers: which content version of an app it has
 * applied (the admin CLI polls it after a load). Each service's schema has the same `apps` table.
 */
export function contentVersionEndpoint(service: (typeof CONTENT_SERVICES)[number], pool: Pool) {
  return endpoint(adminContentVersion(service), async (req) => ({ service, contentVersion: await appliedContentVersion(pool, req.appId) }));
}
