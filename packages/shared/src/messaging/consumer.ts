import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg, type NatsConnection } from 'nats';
import type { Logger } from 'pino';
import type { Pool } from '../db/pool.js';
import { prefixed, streamName } from '../runtime/subjects.js';
import { grantsStream } from './stream.js';
import type { ServiceMetrics } from '../observability/metrics.js';
import type { ConsumerDef } from './consumer-def.js';
import { deliverBatch } from './consumer-delivery.js';

/** A running consumer; `stop` lets the messages in hand finish. */
export interface RunningConsumer {
  stop(): Promise<void>;
}

/**
 * How long JetStream waits for an ack before redelivering: what a crashed replica held is
 * redelivered (to another replica, or to it once restarted) within this. Short, so grants converge
 * within seconds of a crash; messages that are merely slow (pulled and waiting in the buffer, or
 * in a long batch) are kept alive with in-progress acks every half of it, so a busy consumer
 * causes no redelivery storm.
 */
export const ACK_WAIT_MS = 4_000;

type ConsumerDeps = {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  pool: Pool;
  prefix: string;
  log: Logger;
  metrics: ServiceMetrics;
};

/** Starts a durable pull consumer on the grants stream for one message kind. */
export async function startConsumer(def: ConsumerDef, deps: ConsumerDeps): Promise<RunningConsumer> {
  const stream = grantsStream(deps.prefix);
  const durable = streamName(deps.prefix, def.durable);
  await ensureDurable(def, deps, stream, durable);
  const c = await deps.js.consumers.get(stream, durable);
  // Messages arrive in a buffer; one loop applies what has arrived, a batch (or one) at a time.
  const buffer: JsMsg[] = [];
  let wake: (() => void) | undefined;
  let closing = false;
  const messages = await c.consume({
    max_messages: 256,
    callback: (m) => {
      buffer.push(m);
      wake?.();
    },
  });
  const maxDeliver = def.maxDeliver ?? 8;
  const batchSize = def.handle ? 1 : (def.batchSize ?? 100);
  let inHand: JsMsg[] = [];
  const keepAlive = setInterval(() => {
    for (const m of inHand) m.working();
    for (const m of buffer) m.working();
  }, ACK_WAIT_MS / 2);
  keepAlive.unref();
  const loop = (async () => {
    for (;;) {
      if (buffer.length === 0) {
        if (closing) return;
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
        continue;
      }
      inHand = buffer.splice(0, batchSize);
      await deliverBatch(def, inHand, maxDeliver, deps).catch((err) =>
        deps.log.error({ err: String(err), consumer: def.durable }, 'consumer batch failed unexpectedly'),
      );
      inHand = [];
    }
  })();
  return {
    async stop() {
      await messages.close().catch(() => undefined);
      closing = true;
      wake?.();
      await loop;
      clearInterval(keepAlive);
    },
  };
}

/** Creates the durable consumer, or brings one made by an earlier version with other settings to these. */
async function ensureDurable(def: ConsumerDef, deps: ConsumerDeps, stream: string, durable: string): Promise<void> {
  const settings = { ack_wait: ACK_WAIT_MS * 1e6, max_ack_pending: 1000 };
  try {
    await deps.jsm.consumers.add(stream, {
      durable_name: durable,
      filter_subject: prefixed(deps.prefix, def.event.subject),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ...settings,
    });
  } catch (err) {
    const existing = await deps.jsm.consumers.info(stream, durable).catch(() => undefined);
    if (!existing) throw err;
    await deps.jsm.consumers.update(stream, durable, settings);
  }
}
