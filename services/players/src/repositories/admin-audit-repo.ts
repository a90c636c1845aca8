import type { Queryable } from '@ccs/shared';

/** One admin API call as the audit log keeps it. */
export interface AuditEntry {
  actor: string;
  action: string;
  target: string | null;
  status: number;
  requestId: string;
  /** What the person who acted wrote about it; null when nothing. */
  note: string | null;
}

/** Appends one admin API call to the app's audit log. */
export async function appendAuditEntry(q: Queryable, appId: string, e: AuditEntry): Promise<void> {
  await q.query('INSERT INTO admin_audit (app_id, actor, action, target, status, request_id, note) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
    appId,
    e.actor,
    e.action,
    e.target,
    e.status,
    e.requestId,
    e.note,
  ]);
}

/** A page of the app's audit log, newest first, and how many entries it holds in all. */
export async function listAuditEntries(
  q: Queryable,
  appId: string,
  page: { limit: number; offset: number },
): Promise<{ entries: (AuditEntry & { at: string })[]; total: number }> {
  const [rows, count] = await Promise.all([
    q.query<{ at: Date; actor: string; action: string; target: string | null; status: number; request_id: string; note: string | null }>(
      'SELECT at, actor, action, target, status, request_id, note FROM admin_audit WHERE app_id = $1 ORDER BY at DESC, id DESC LIMIT $2 OFFSET $3',
      [appId, page.limit, page.offset],
    ),
    q.query<{ n: number }>('SELECT count(*)::int AS n FROM admin_audit WHERE app_id = $1', [appId]),
  ]);
  return {
    entries: rows.rows.map((r) => ({
      at: r.at.toISOString(),
      actor: r.actor,
      action: r.action,
      target: r.target,
      status: r.status,
      requestId: r.request_id,
      note: r.note,
    })),
    total: count.rows[0]!.n,
  };
}
