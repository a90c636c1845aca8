import { AckPolicy, DeliverPolicy, type ConsumerInfo, type JetStreamManager, type NatsError } from 'nats';
import { ACK_WAIT_MS, grantsStream, periodicWorker, RETIRED_DURABLES, streamName, type Logger, type Worker } from '@ccs/shared';

/** JetStream's error code for a consumer that does not exist. */
const CONSUMER_NOT_FOUND = 10014;

const notFound = (err: unknown): boolean => (err as NatsError).api_error?.err_code === CONSUMER_NOT_FOUND;

async function infoOf(jsm: JetStreamManager, stream: string, durable: string): Promise<ConsumerInfo | undefined> {
  try {
    return await jsm.consumers.info(stream, durable);
  } catch (err) {
    if (notFound(err)) return undefined;
    throw err;
  }
}

/** The durables renamed in RETIRED_DURABLES, with the stream's and the prefix's names. */
function pairs(prefix: string): { stream: string; old: string; now: string }[] {
  const stream = grantsStream(prefix);
  return Object.entries(RETIRED_DURABLES).map(([old, now]) => ({ stream, old: streamName(prefix, old), now: streamName(prefix, now) }));
}

/**
 * Run before the consumers start: each new durable that does not exist yet, while its retired
 * name does, is created where the old one stands, starting after its ack floor (every message up
 * to it was applied), so renaming skips nothing. A message acknowledged beyond the floor comes
 * again within seconds and stores nothing: its webhook events exist already (same ids, kept
 * WEBHOOK_KEEP_DELIVERED_HOURS, an hour at least), so no delivery is made twice. Without an old
 * durable the consumer creates the new one as usual.
 */
export async function takeOverRetiredDurables(jsm: JetStreamManager, prefix: string, log: Logger): Promise<void> {
  for (const { stream, old, now } of pairs(prefix)) {
    const before = await infoOf(jsm, stream, old);
    if (!before || (await infoOf(jsm, stream, now))) continue;
    const from = before.ack_floor.stream_seq + 1;
    await jsm.consumers.add(stream, {
      durable_name: now,
      filter_subject: before.config.filter_subject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: from,
      ack_wait: ACK_WAIT_MS * 1e6,
      max_ack_pending: 1000,
    });
    log.info({ durable: now, from: old, startSequence: from }, 'durable consumer takes over from its retired name');
  }
}

/**
 * Deletes each retired durable once its new one exists and no replica has pulled from it on two
 * passes in a row (a replica of the version that used it still running would create it again
 * right after a delete, and read the stream from its start). Until then both are applied, and
 * each message once by its key.
 */
export function retiredDurablesSweeper(jsm: JetStreamManager, prefix: string, log: Logger, everyMs = 30_000): Worker {
  const idle = new Set<string>();
  return periodicWorker({
    log,
    everyMs,
    what: 'retired durable consumers deleted',
    pass: async () => {
      let deleted = 0;
      for (const { stream, old, now } of pairs(prefix)) {
        const retired = await infoOf(jsm, stream, old);
        if (!retired || !(await infoOf(jsm, stream, now))) continue;
        if (retired.num_waiting > 0) {
          idle.delete(old);
          continue;
        }
        if (!idle.has(old)) {
          idle.add(old);
          continue;
        }
        await jsm.consumers.delete(stream, old).catch((err: unknown) => {
          if (!notFound(err)) throw err;
        });
        idle.delete(old);
        deleted++;
      }
      return deleted;
    },
  });
}
