import { AsyncLocalStorage } from 'node:async_hooks';
import type { NatsConnection } from 'nats';
import type { Queryable } from '../db/pool.js';
import { preparedStatement } from '../db/prepared.js';
import { prefixed } from '../runtime/subjects.js';

/** Per delivery: whether the handler found the message already processed (counted as `duplicate`). */
export const deliveryState = new AsyncLocalStorage<{ duplicate: boolean }>();

const MARK_PROCESSED = preparedStatement(
  'processed_mark',
  'INSERT INTO processed_messages (message_id, consumer) VALUES ($1, $2) ON CONFLICT (message_id) DO NOTHING',
);

/**
 * Records a message id as processed inside the caller's transaction. Returns false when it was
 * already processed, in which case the caller must change nothing.
 */
export async function markProcessed(tx: Queryable, messageId: string, consumerName: string): Promise<boolean> {
  const r = await tx.query(MARK_PROCESSED.with([messageId, consumerName]));
  if (r.rowCount === 1) return true;
  const delivery = deliveryState.getStore();
  if (delivery) delivery.duplicate = true;
  return false;
}

const MARK_PROCESSED_BATCH = preparedStatement(
  'processed_mark_batch',
  `INSERT INTO processed_messages (message_id, consumer) SELECT unnest($1::text[]), $2
     ON CONFLICT (message_id) DO NOTHING RETURNING message_id`,
);

/**
 * Records a batch's message ids as processed by `consumerName` inside the caller's transaction;
 * returns the ids that were not processed before (only those may be applied).
 */
export async function markProcessedBatch(tx: Queryable, messageIds: string[], consumerName: string): Promise<Set<string>> {
  const r = await tx.query<{ message_id: string }>(MARK_PROCESSED_BATCH.with([messageIds, consumerName]));
  return new Set(r.rows.map((row) => row.message_id));
}

/**
 * Subject on which a consumer announces that it applied a durable message:
 * `applied.<message id>.<durable>`, so a waiter can wait for one consumer or any.
 */
export function appliedSubject(prefix: string, messageId: string, durable = '*'): string {
  return prefixed(prefix, `applied.${messageId}.${durable}`);
}

/**
 * Waits (bounded) until every named message has been applied by a consumer (by the durable
 * `consumer` when given). Subscribe before publishing, then await `done`; it resolves with the
 * ids seen in time.
 */
export function watchApplied(nc: NatsConnection, prefix: string, messageIds: string[], consumer?: string) {
  const pending = new Set(messageIds);
  const seen = new Set<string>();
  let resolve!: () => void;
  const all = new Promise<void>((r) => (resolve = r));
  const subs = messageIds.map((id) =>
    nc.subscribe(appliedSubject(prefix, id, consumer), {
      max: 1,
      callback: () => {
        pending.delete(id);
        seen.add(id);
        if (pending.size === 0) resolve();
      },
    }),
  );
  if (messageIds.length === 0) resolve();
  return {
    async done(timeoutMs: number): Promise<Set<string>> {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
      for (const s of subs) s.unsubscribe();
      return seen;
    },
  };
}
