import type { AdminAppSummary, Queryable } from '@ccs/shared';

/** Every app with its players and live keys, oldest first (for operators). */
export async function listApps(q: Queryable): Promise<AdminAppSummary[]> {
  const { rows } = await q.query<{
    id: string;
    name: string;
    is_demo: boolean;
    content_version: number;
    created_at: Date;
    players: number;
    pk: number;
    sk: number;
  }>(
    `SELECT a.id, a.name, a.is_demo, a.content_version, a.created_at,
            (SELECT count(*) FROM players p WHERE p.app_id = a.id)::int AS players,
            (SELECT count(*) FROM api_keys k WHERE k.app_id = a.id AND k.kind = 'publishable'
               AND (k.revoked_at IS NULL OR k.revoked_at > now()))::int AS pk,
            (SELECT count(*) FROM api_keys k WHERE k.app_id = a.id AND k.kind = 'secret'
               AND (k.revoked_at IS NULL OR k.revoked_at > now()))::int AS sk
     FROM apps a ORDER BY a.created_at, a.id`,
  );
  return rows.map((r) => ({
    appId: r.id,
    name: r.name,
    isDemo: r.is_demo,
    contentVersion: r.content_version,
    createdAt: r.created_at.toISOString(),
    players: r.players,
    liveKeys: { publishable: r.pk, secret: r.sk },
  }));
}

/** An app's row and its player counts; undefined for an unknown app. */
export async function appPlayerStats(q: Queryable, appId: string) {
  const { rows } = await q.query<{
    name: string;
    is_demo: boolean;
    created_at: Date;
    content_version: number;
    total: number;
    registered: number;
    guests: number;
  }>(
    `SELECT a.name, a.is_demo, a.created_at, a.content_version,
            count(p.id)::int AS total,
            (count(p.id) FILTER (WHERE NOT p.is_anonymous))::int AS registered,
            (count(p.id) FILTER (WHERE p.is_anonymous))::int AS guests
     FROM apps a LEFT JOIN players p ON p.app_id = a.id
     WHERE a.id = $1 GROUP BY a.id`,
    [appId],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    app: { name: r.name, isDemo: r.is_demo, createdAt: r.created_at.toISOString() },
    contentVersion: r.content_version,
    players: { total: r.total, registered: r.registered, guests: r.guests },
  };
}
