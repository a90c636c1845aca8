import type { Pool, Queryable } from '../db/pool.js';
import { preparedStatement } from '../db/prepared.js';

/**
 * The outbox table of every service's schema (shared/migrations/messaging): rows written in the
 * writer's transaction, claimed, published and marked by the relay (outbox.ts). Not scoped by app:
 * the relay publishes every app's messages.
 */

/** A durable message as the outbox holds it. */
export interface OutboxMessage {
  id: string;
  subject: string;
  payload: unknown;
  headers: Record<string, string>;
}

/** Columns of an outbox row, in the order `outboxParams` gives them. */
export const OUTBOX_COLUMNS = 'id, subject, payload, headers';

/** Parameters of an outbox row for `INSERT INTO outbox (OUTBOX_COLUMNS)`. */
export function outboxParams(m: OutboxMessage): [string, string, unknown, Record<string, string>] {
  return [m.id, m.subject, m.payload, m.headers];
}

/** Writes one durable message in the caller's transaction. */
export async function insertOutboxMessage(tx: Queryable, message: OutboxMessage): Promise<void> {
  await tx.query(`INSERT INTO outbox (${OUTBOX_COLUMNS}) VALUES ($1, $2, $3, $4)`, outboxParams(message));
}

/** Writes built messages (`outboxMessage`) to the outbox in the caller's transaction, in one statement. */
export async function insertOutboxMessages(tx: Queryable, messages: OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await tx.query(`INSERT INTO outbox (${OUTBOX_COLUMNS}) SELECT * FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::jsonb[])`, [
    messages.map((m) => m.id),
    messages.map((m) => m.subject),
    messages.map((m) => JSON.stringify(m.payload)),
    messages.map((m) => JSON.stringify(m.headers)),
  ]);
}

/**
 * The outbox rows of `messages` as a data-modifying CTE body for a statement of the caller's, so
 * a change and the messages announcing it commit as one statement (no transaction around them):
 * `WITH x AS (<the change> RETURNING …), m AS (${'${sql}'}) SELECT … FROM x`. Its parameters start at
 * `$first`; the rows are written only where `condition` (SQL over the statement's CTEs) holds.
 */
export function outboxRowsCte(messages: OutboxMessage[], first: number, condition: string): { sql: string; params: unknown[] } {
  return {
    sql: `INSERT INTO outbox (${OUTBOX_COLUMNS}) SELECT * FROM unnest($${first}::uuid[], $${first + 1}::text[], $${first + 2}::jsonb[], $${first + 3}::jsonb[]) WHERE ${condition}`,
    params: [
      messages.map((m) => m.id),
      messages.map((m) => m.subject),
      messages.map((m) => JSON.stringify(m.payload)),
      messages.map((m) => JSON.stringify(m.headers)),
    ],
  };
}

/** Number of messages not yet confirmed by the stream. */
export async function countUnpublished(q: Queryable): Promise<number> {
  const r = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL');
  return r.rows[0]!.n;
}

/** Backlog and age of the oldest unpublished message, in one query on the partial index. */
export async function unpublishedStats(q: Queryable): Promise<{ count: number; oldestAgeSeconds: number }> {
  const r = await q.query<{ n: number; age: number }>(
    `SELECT count(*)::int AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age
     FROM outbox WHERE published_at IS NULL`,
  );
  return { count: r.rows[0]!.n, oldestAgeSeconds: Math.max(0, r.rows[0]!.age) };
}

/**
 * Claims for `claimMs` up to `limit` unpublished rows older than `freshMs` that no pass holds,
 * oldest first, in one statement (`FOR UPDATE SKIP LOCKED`: replicas share the work).
 */
export async function claimUnpublished(q: Queryable, limit: number, claimMs: number, freshMs: number): Promise<OutboxMessage[]> {
  const { rows } = await q.query<OutboxMessage>(
    `UPDATE outbox SET claimed_until = now() + make_interval(secs => $2::float8 / 1000)
      WHERE id IN (SELECT id FROM outbox
                    WHERE published_at IS NULL AND created_at <= now() - make_interval(secs => $3::float8 / 1000)
                      AND (claimed_until IS NULL OR claimed_until < now())
                    ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id, subject, payload, headers`,
    [limit, claimMs, freshMs],
  );
  return rows;
}

const MARK_PUBLISHED = preparedStatement(
  'outbox_mark_published',
  `WITH async AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))
     UPDATE outbox SET published_at = now(), claimed_until = NULL FROM async WHERE id = ANY($1::uuid[]) AND published_at IS NULL`,
);

/**
 * Marks rows published (a row already marked keeps its first time), with an asynchronous commit:
 * `set_config('synchronous_commit', 'off', true)` is `SET LOCAL` for this statement's own
 * (implicit) transaction, so its COMMIT does not wait for the WAL flush, and the session keeps its
 * setting. Safe here and nowhere a lost commit loses data: a Postgres crash within the WAL
 * writer's delay (up to 3 × `wal_writer_delay`) may lose only this mark, the row is then
 * unpublished again and a later relay pass publishes it again with the same `Nats-Msg-Id` (the
 * row id), which the grants stream drops within its duplicate window and every consumer
 * recognises after it (processed_messages, or the payload's own key). Consumers acting on a grant
 * never wait for the mark; rows the relay claims are marked in one statement per pass, rows
 * published at once in one statement per `MARK_EVERY_MS` (outbox.ts). docs/performance.md,
 * "Postgres per statement". Takes the pool, never a transaction's client:
 * inside a caller's transaction the setting would make that whole transaction's commit asynchronous.
 */
export async function markOutboxPublished(pool: Pool, ids: string[]): Promise<void> {
  await pool.query(MARK_PUBLISHED.with([ids]));
}

/** Releases the claim on rows that could not be published, so the next pass tries them at once. */
export async function releaseOutboxClaims(q: Queryable, ids: string[]): Promise<void> {
  await q.query('UPDATE outbox SET claimed_until = NULL WHERE id = ANY($1::uuid[]) AND published_at IS NULL', [ids]);
}
