import {
  AckPolicy,
  DeliverPolicy,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import type { Logger } from 'pino';
import type { Pool } from '../db/pool.js';
import { prefixed, streamName } from '../runtime/subjects.js';
import { grantsStream } from './stream.js';
import type { ServiceMetrics } from '../observability/metrics.js';
import type { ConsumerDef } from './consumer-def.js';
import { deliverBatch } from './consumer-delivery.js';
import { whileJetStreamSettles } from './jetstream-settle.js';

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

/**
 * How long one pull request waits on the server. The client checks its heartbeats every half of
 * it and, after losing its server (a NATS node down, a stream leader moving), retries on this
 * rhythm: 5 s rather than the library's 30 s, so grants flow again within seconds of a cluster
 * change. An idle consumer costs one small request per 5 s.
 */
export const PULL_EXPIRES_MS = 5_000;

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
  const settle = { nc: deps.nc, log: deps.log };
  await whileJetStreamSettles(`consumer ${durable}`, () => ensureDurable(def, deps, stream, durable), settle);
  const c = await whileJetStreamSettles(`consumer ${durable}`, () => deps.js.consumers.get(stream, durable), settle);
  // Messages arrive in a buffer; one loop applies what has arrived, a batch (or one) at a time.
  const buffer: JsMsg[] = [];
  let wake: (() => void) | undefined;
  let closing = false;
  const pulls = await keepPulling(
    c,
    (m) => {
      buffer.push(m);
      wake?.();
    },
    { log: deps.log, consumer: def.durable, ensure: () => ensureDurable(def, deps, stream, durable) },
  );
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
      await pulls.close();
      closing = true;
      wake?.();
      await loop;
      clearInterval(keepAlive);
    },
  };
}

/**
 * Pulls from `c` into `onMessage` until closed. The library stops a pull loop for good on some
 * server answers (consumer deleted, a bad request): nothing would be delivered to this replica
 * again. Another one is started then, the durable made again first (should it have been deleted).
 */
async function keepPulling(
  c: Consumer,
  onMessage: (m: JsMsg) => void,
  o: { log: Logger; consumer: string; ensure: () => Promise<void> },
): Promise<{ close(): Promise<void> }> {
  let stopping = false;
  const open = () => c.consume({ max_messages: 256, expires: PULL_EXPIRES_MS, callback: onMessage });
  let messages = await open();
  const watch = (m: ConsumerMessages): void =>
    void m.closed().then(async (err) => {
      while (!stopping) {
        o.log.error({ err: String(err ?? 'closed'), consumer: o.consumer }, 'the pull loop stopped; starting it again in 1 s');
        await new Promise((r) => setTimeout(r, 1000));
        if (stopping) return;
        try {
          await o.ensure();
          messages = await open();
          return watch(messages);
        } catch (e) {
          err = e as Error;
        }
      }
    });
  watch(messages);
  return {
    async close() {
      stopping = true;
      await messages.close().catch(() => undefined);
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
