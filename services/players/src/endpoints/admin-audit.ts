import { AdminGetContentVersion, AdminListAudit, AdminListContentVersions, AdminRecordAudit, AppError, endpoint, type Pool } from '@ccs/shared';
import { listContents } from '../repositories/apps-repository.js';

/** players.v1.admin_record_audit: one admin API call, appended to the app's audit log. */
export function adminRecordAuditEndpoint(pool: Pool) {
  return endpoint(AdminRecordAudit, async (req) => {
    await pool.query('INSERT INTO admin_audit (app_id, actor, action, target, status, request_id) VALUES ($1, $2, $3, $4, $5, $6)', [
      req.appId,
      req.actor,
      req.action,
      req.target,
      req.status,
      req.requestId,
    ]);
    return {};
  });
}

/** players.v1.admin_list_audit: the app's audit log, newest first, paginated. */
export function adminListAuditEndpoint(pool: Pool) {
  return endpoint(AdminListAudit, async ({ appId, page }) => {
    const [rows, count] = await Promise.all([
      pool.query<{ at: Date; actor: string; action: string; target: string | null; status: number; request_id: string }>(
        'SELECT at, actor, action, target, status, request_id FROM admin_audit WHERE app_id = $1 ORDER BY at DESC, id DESC LIMIT $2 OFFSET $3',
        [appId, page.limit, page.offset],
      ),
      pool.query<{ n: number }>('SELECT count(*)::int AS n FROM admin_audit WHERE app_id = $1', [appId]),
    ]);
    return {
      entries: rows.rows.map((r) => ({
        at: r.at.toISOString(),
        actor: r.actor,
        action: r.action,
        target: r.target,
        status: r.status,
        requestId: r.request_id,
      })),
      total: count.rows[0]!.n,
    };
  });
}

/** players.v1.admin_content_versions: the app's stored content versions, newest first, with their sizes. */
export function adminListContentVersionsEndpoint(pool: Pool) {
  return endpoint(AdminListContentVersions, async ({ appId }) => {
    const [current, versions] = await Promise.all([
      pool.query<{ content_version: number }>('SELECT content_version FROM apps WHERE id = $1', [appId]),
      listContents(pool, appId),
    ]);
    if (!current.rows[0]) throw AppError.notFound('app_not_found', `No app ${appId}.`);
    return {
      current: current.rows[0].content_version,
      versions: versions.map((v) => ({
        version: v.version,
        loadedAt: v.loadedAt.toISOString(),
        counts: {
          currencies: v.content.currencies.length,
          rarities: v.content.rarities.length,
          collections: v.content.collections.length,
          collectibles: v.content.collections.reduce((n, c) => n + c.collectibles.length, 0),
          chests: v.content.chests.length,
        },
      })),
    };
  });
}

/** players.v1.admin_get_content_version: one stored content version, as loaded. */
export function adminGetContentVersionEndpoint(pool: Pool) {
  return endpoint(AdminGetContentVersion, async ({ appId, version }) => {
    const found = (await listContents(pool, appId)).find((v) => v.version === version);
    if (!found)
      throw AppError.notFound('content_version_not_found', `App ${appId} has no stored content version ${version}.`, { parameter: 'version' });
    return { version, loadedAt: found.loadedAt.toISOString(), content: found.content };
  });
}
