import type { NatsConnection } from 'nats';
import type { Server } from 'node:http';
import type pg from 'pg';
import type { Logger } from '../config/logger.js';
import type { RunningConsumer } from '../messaging/consumer.js';

/** What a started service holds that its stop lets go of, in order. */
export interface Holdings {
  name: string;
  log: Logger;
  /** Marks the service not ready (step 1). */
  markNotReady(): void;
  endpoints: { stop(): Promise<unknown> };
  inFlight: Set<Promise<unknown>>;
  consumers: RunningConsumer[];
  workers: { stop(): Promise<void> }[];
  nc: NatsConnection;
  pool: pg.Pool;
  healthServer?: Server;
}

/** The graceful stop: nothing taken any more, everything in hand finished, then closed. */
export async function stopGracefully(h: Holdings): Promise<void> {
  const began = Date.now();
  // 1. Not ready from now on (HTTP /readyz and the health subject), so probes and the
  //    gateway's /readyz stop counting on this replica while it drains.
  h.markNotReady();
  // 2. Drain the endpoint subscriptions: the server routes new requests to the other
  //    replicas of the queue group at once, and every message already delivered here still
  //    reaches its handler (the Service API's stop drains its subscriptions, it drops nothing).
  await h.endpoints.stop().catch((err) => h.log.warn({ err: String(err) }, 'endpoint drain failed'));
  // 3. The requests in hand answer before anything they use goes away.
  const handlers = h.inFlight.size;
  await Promise.allSettled([...h.inFlight]);
  // 4. Consumers stop pulling and finish the messages already pulled; a message never acked
  //    (a crash) is redelivered by JetStream to another replica after its ack wait.
  await Promise.all(h.consumers.map((c) => c.stop()));
  // 5. Workers (outbox relays, sweepers) finish their pass; rows left are another replica's.
  await Promise.all(h.workers.map((w) => w.stop()));
  // 6. Flush what is still buffered for NATS (replies, acks), then close.
  await h.nc.drain().catch(() => undefined);
  await h.pool.end().catch(() => undefined);
  h.healthServer?.close();
  h.log.info({ handlersFinished: handlers, ms: Date.now() - began }, `${h.name} service stopped`);
}
