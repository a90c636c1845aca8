import type { z } from 'zod';
import type { CallContext } from '../contracts/context.js';
import type { EventContract } from '../contracts/subject.js';
import type { PoolClient, Queryable } from '../db/pool.js';

/** What a durable handler learns about the message besides its payload. */
export interface DeliveryInfo {
  messageId: string;
  ctx: CallContext;
  deliveryCount: number;
}

/** One message of a batch, validated, with what the runtime knows about it. */
export interface Delivery<P> extends DeliveryInfo {
  payload: P;
  /**
   * Set by a batch handler: a small JSON value (a few hundred bytes) sent with this message's
   * applied notice, so the process waiting on it learns what applying it decided (see
   * AppliedNotices) without asking again. Left unset, the notice carries only the message id.
   */
  notice?: unknown;
}

/**
 * A durable JetStream consumer of one message kind, applied at least once and idempotently, in
 * one of two ways:
 * - `handle`: one message at a time; the handler opens its own transaction and calls
 *   `markProcessed` in it;
 * - `applyBatch`: every message pulled meanwhile (up to `batchSize`) in ONE transaction that the
 *   runtime opens; the runtime has already recorded their ids as processed in it and passes only
 *   the messages never processed before, in delivery order. Each is acked after the commit. When
 *   a batch fails, its messages are retried one by one, so one bad message delays only itself.
 */
export type ConsumerDef<P extends z.ZodType = z.ZodType> = ConsumerBase<P> & (PerMessage<P> | Batched<P> | SelfIdempotent<P>);

interface ConsumerBase<P extends z.ZodType> {
  /** Durable name, unique per service and message kind (e.g. `wallet-registration-grants`). */
  durable: string;
  event: EventContract<P>;
  /** Deliveries before the message is parked for an operator; default 8. */
  maxDeliver?: number;
  /**
   * A message this consumer need not apply, told from its headers alone (the caller's context:
   * app, player, request): it is acked without its payload decoded, counted `skipped`, and no
   * applied notice goes out. For work that only some apps want (egress: the webhook fan-out of
   * apps without an endpoint for the events). An error here counts as "do not skip".
   */
  skip?(ctx: CallContext): boolean | Promise<boolean>;
}

interface PerMessage<P extends z.ZodType> {
  handle(payload: z.infer<P>, info: DeliveryInfo): Promise<void>;
  applyBatch?: undefined;
  applyIdempotent?: undefined;
  processedId?: undefined;
}

interface Batched<P extends z.ZodType> {
  applyBatch(tx: PoolClient, batch: Delivery<z.infer<P>>[]): Promise<void>;
  /** At most this many messages per transaction; default 100. */
  batchSize?: number;
  /**
   * The id a message is recorded as processed under; default its message id. A payload's own key
   * (e.g. the opening id) also recognises the same grant re-published under another message id.
   */
  processedId?(payload: z.infer<P>): string;
  /**
   * Called with the batch's deliveries once its transaction committed, before the acks (e.g. to
   * publish at once the outbox rows it wrote; the relay publishes them otherwise). Not awaited.
   */
  afterCommit?(batch: Delivery<z.infer<P>>[]): void;
  handle?: undefined;
  applyIdempotent?: undefined;
}

/**
 * A batch applied by ONE statement that is idempotent by the payloads' own keys (e.g. an
 * opening's items keyed by opening and slot: a second delivery inserts nothing): no transaction
 * and no `processed_messages` row are needed around it. Returns the keys (`processedId`) whose
 * messages changed something; the others count as duplicates.
 */
interface SelfIdempotent<P extends z.ZodType> {
  applyIdempotent(db: Queryable, batch: Delivery<z.infer<P>>[]): Promise<Set<string>>;
  /** The payload's own key. */
  processedId(payload: z.infer<P>): string;
  /** At most this many messages per statement; default 100. */
  batchSize?: number;
  handle?: undefined;
  applyBatch?: undefined;
}

/** Declares a durable consumer (keeps the payload type tied to the event). */
export function consumer<P extends z.ZodType>(def: ConsumerBase<P> & PerMessage<P>): ConsumerBase<P> & PerMessage<P>;
export function consumer<P extends z.ZodType>(def: ConsumerBase<P> & Batched<P>): ConsumerBase<P> & Batched<P>;
export function consumer<P extends z.ZodType>(def: ConsumerBase<P> & SelfIdempotent<P>): ConsumerBase<P> & SelfIdempotent<P>;
export function consumer(def: ConsumerDef): ConsumerDef {
  return def;
}
