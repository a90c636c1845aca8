import { AdminListAudit, AdminRecordAudit, endpoint, type Pool } from '@ccs/shared';

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
