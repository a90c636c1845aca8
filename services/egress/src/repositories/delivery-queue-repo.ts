import type { Queryable } from '@ccs/shared';

/**
 * The egress worker's delivery queue: claiming due deliveries and recording each attempt's
 * outcome. The claim, the parking of abandoned attempts and the clean-up work across every app
 * (the worker serves them all, fairly); the outcome of an attempt is written to the delivery it
 * claimed, scoped by its endpoint.
 */

/** A delivery this sender took (its attempt already counted), with what it sends. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  app_id: string;
  /** This attempt's number (counted by the claim). */
  attempts: number;
  url: string;
  secret: string;
  event_id: string;
  event_type: string;
  player_id: string | null;
  body: string;
}

/**
 * The claim, one statement. Due deliveries of enabled endpoints are queued per (endpoint, player),
 * oldest event first, and only a queue's head is taken, and only when nothing of that queue is in
 * flight (one player's events go one after another). The heads are then dealt round-robin across
 * apps (`row_number() over (partition by app)`): each app gets at most WEBHOOK_APP_CONCURRENCY
 * requests in flight, counting the ones already running on any replica, so one app's slow or
 * failing endpoints never take the slots another app's deliveries need. The attempt is counted
 * here, before the request is sent, with the next try's time (backoff, ±20 % jitter) and a lease:
 * a sender that dies mid-attempt leaves a delivery that has moved towards parking, and another
 * sender takes it when the lease and the backoff are over.
 *
 * $1 how many, $2 lease ms, $3 per-app cap, $4 backoff base ms, $5 backoff max ms.
 */
const CLAIM = `
  WITH busy AS (
    SELECT d.endpoint_id, e.app_id, ev.player_id
      FROM webhook_deliveries d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id
      JOIN webhook_events ev ON ev.id = d.event_id
     WHERE d.status = 'pending' AND d.claimed_until > now()
  ),
  busy_apps AS (SELECT app_id, count(*)::int AS n FROM busy GROUP BY app_id),
  due AS (
    SELECT d.id, e.app_id, d.endpoint_id, ev.player_id, ev.occurred_at, d.next_attempt_at,
           row_number() OVER (PARTITION BY d.endpoint_id, coalesce(ev.player_id, d.id) ORDER BY ev.occurred_at, d.id) AS place
      FROM webhook_deliveries d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id
      JOIN webhook_events ev ON ev.id = d.event_id
     WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND e.enabled
       AND (d.claimed_until IS NULL OR d.claimed_until <= now())
  ),
  heads AS (
    SELECT due.* FROM due
     WHERE due.place = 1
       AND NOT EXISTS (SELECT 1 FROM busy b WHERE b.endpoint_id = due.endpoint_id AND b.player_id = due.player_id)
  ),
  turns AS (
    SELECT h.id, h.app_id, row_number() OVER (PARTITION BY h.app_id ORDER BY h.next_attempt_at, h.occurred_at, h.id) AS turn
      FROM heads h
  ),
  picked AS (
    SELECT t.id FROM turns t LEFT JOIN busy_apps b ON b.app_id = t.app_id
     WHERE t.turn <= $3 - coalesce(b.n, 0)
     ORDER BY t.turn, t.id
     LIMIT $1
  ),
  locked AS (
    SELECT d.id FROM webhook_deliveries d
     WHERE d.id IN (SELECT id FROM picked) AND d.status = 'pending' AND (d.claimed_until IS NULL OR d.claimed_until <= now())
     FOR UPDATE SKIP LOCKED
  )
  UPDATE webhook_deliveries d
     SET attempts = d.attempts + 1,
         last_attempt_at = now(),
         claimed_until = now() + make_interval(secs => $2::double precision / 1000),
         next_attempt_at = now() + make_interval(secs =>
           least($5::double precision, $4::double precision * power(2, least(d.attempts, 40))) * (0.8 + 0.4 * random()) / 1000)
    FROM locked, webhook_endpoints e, webhook_events ev
   WHERE d.id = locked.id AND e.id = d.endpoint_id AND ev.id = d.event_id
  RETURNING d.id, d.endpoint_id, e.app_id, d.attempts, e.url, e.secret, ev.id AS event_id, ev.type AS event_type, ev.player_id, ev.body`;

/** How the claim takes deliveries: how many, the lease, the per-app cap and the backoff bounds. */
export interface ClaimLimits {
  limit: number;
  leaseMs: number;
  appConcurrency: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/** Claims due deliveries (their attempt counted, leased), fairly across apps; see CLAIM. */
export async function claimDueDeliveries(db: Queryable, l: ClaimLimits): Promise<ClaimedDelivery[]> {
  const r = await db.query<ClaimedDelivery>(CLAIM, [l.limit, l.leaseMs, l.appConcurrency, l.backoffBaseMs, l.backoffMaxMs]);
  return r.rows;
}

/** Marks a claimed delivery delivered, with the status code its endpoint answered. */
export async function recordDelivered(db: Queryable, d: { id: string; endpointId: string }, statusCode: number): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'delivered', delivered_at = now(), last_status_code = $3, last_error = NULL, claimed_until = NULL
      WHERE id = $1 AND endpoint_id = $2`,
    [d.id, d.endpointId, statusCode],
  );
}

/** A failed attempt: what it got, and when to try again. */
export interface FailedAttempt {
  id: string;
  endpointId: string;
  statusCode: number | null;
  error: string | null;
  retryWindowMs: number;
  delayMs: number;
}

/**
 * Records a failed attempt of a pending delivery: the next try `delayMs` from now, or parked when
 * that falls past its retry window. Returns the new status and next time (none if not pending).
 */
export async function recordFailedAttempt(db: Queryable, f: FailedAttempt): Promise<{ status: string; next_attempt_at: Date } | undefined> {
  const r = await db.query<{ status: string; next_attempt_at: Date }>(
    `UPDATE webhook_deliveries
        SET last_status_code = $3, last_error = $4, claimed_until = NULL,
            next_attempt_at = now() + make_interval(secs => $6::double precision / 1000),
            status = CASE WHEN now() + make_interval(secs => $6::double precision / 1000)
                               > window_start + make_interval(secs => $5::double precision / 1000)
                          THEN 'parked' ELSE 'pending' END
      WHERE id = $1 AND endpoint_id = $2 AND status = 'pending'
      RETURNING status, next_attempt_at`,
    [f.id, f.endpointId, f.statusCode, f.error, f.retryWindowMs, f.delayMs],
  );
  return r.rows[0];
}

/** Parks the attempts whose sender died (lease over) when their next try falls past the retry window. */
export async function parkAbandonedDeliveries(db: Queryable, retryWindowMs: number): Promise<number> {
  const r = await db.query(
    `UPDATE webhook_deliveries SET status = 'parked', claimed_until = NULL
      WHERE status = 'pending' AND attempts > 0 AND claimed_until IS NOT NULL AND claimed_until <= now()
        AND next_attempt_at > window_start + make_interval(secs => $1::double precision / 1000)`,
    [retryWindowMs],
  );
  return r.rowCount ?? 0;
}

/**
 * Deletes the deliveries delivered more than `keepHours` ago, and the events no delivery needs
 * any more. Returns how many deliveries went.
 */
export async function removeDeliveredOlderThan(db: Queryable, keepHours: number): Promise<number> {
  const r = await db.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM webhook_deliveries
        WHERE status = 'delivered' AND delivered_at < now() - make_interval(hours => $1)
       RETURNING id, event_id
     ),
     events AS (
       DELETE FROM webhook_events ev
        WHERE ev.id IN (SELECT event_id FROM gone)
          -- The statement still sees the rows it deletes: other deliveries of the event keep it.
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.id NOT IN (SELECT id FROM gone))
     )
     SELECT count(*)::int AS n FROM gone`,
    [keepHours],
  );
  return r.rows[0]!.n;
}

/** Deliveries not yet delivered, pending and parked (for the backlog gauge). */
export async function deliveryBacklog(db: Queryable): Promise<{ pending: number; parked: number }> {
  const r = await db.query<{ pending: number; parked: number }>(
    `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'parked')::int AS parked
       FROM webhook_deliveries WHERE status <> 'delivered'`,
  );
  return r.rows[0]!;
}
