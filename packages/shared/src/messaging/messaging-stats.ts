import type { MessagingStats } from '../contracts/admin.js';
import type { Queryable } from '../db/pool.js';

/**
 * A service's durable-messaging figures for operators, from its own schema: the outbox backlog
 * (for one app, by the app id header every outbox row carries, and in all), the age of the
 * oldest unpublished row, and the parked messages (for one app, by the payload's appId, and in all).
 */
export async function messagingStats(q: Queryable, appId: string): Promise<MessagingStats> {
  const { rows } = await q.query<{ backlog_app: number; backlog_total: number; oldest: number | null; parked_app: number; parked_total: number }>(
    `SELECT
       (SELECT count(*) FILTER (WHERE headers->>'ccs-app-id' = $1) FROM outbox WHERE published_at IS NULL)::int AS backlog_app,
       (SELECT count(*) FROM outbox WHERE published_at IS NULL)::int AS backlog_total,
       (SELECT extract(epoch FROM now() - min(created_at))::float8 FROM outbox WHERE published_at IS NULL) AS oldest,
       (SELECT count(*) FILTER (WHERE payload->>'appId' = $1) FROM parked_messages)::int AS parked_app,
       (SELECT count(*) FROM parked_messages)::int AS parked_total`,
    [appId],
  );
  const r = rows[0]!;
  return {
    outboxBacklog: { app: r.backlog_app, total: r.backlog_total },
    outboxOldestAgeSeconds: r.oldest === null ? null : Math.max(0, Math.round(r.oldest * 10) / 10),
    parked: { app: r.parked_app, total: r.parked_total },
  };
}
