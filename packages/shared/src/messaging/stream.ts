import { RetentionPolicy, StorageType, type JetStreamManager } from 'nats';
import { prefixed, streamName } from '../runtime/subjects.js';

const DAY_NS = 24 * 60 * 60 * 1e9;

/** Name of the stack's durable grants stream. */
export function grantsStream(prefix: string): string {
  return streamName(prefix, 'GRANTS');
}

/**
 * Creates the grants stream (`<prefix>.grants.>`) if missing; every service may call it. On a
 * NATS cluster, `replicas` (JETSTREAM_REPLICAS, e.g. 3) makes the stream survive a server loss;
 * an existing stream with fewer replicas is raised to it.
 */
export async function ensureGrantsStream(jsm: JetStreamManager, prefix: string, replicas = 1): Promise<void> {
  const name = grantsStream(prefix);
  const existing = await jsm.streams.info(name).catch(() => undefined);
  if (existing) {
    if (existing.config.num_replicas < replicas) await jsm.streams.update(name, { ...existing.config, num_replicas: replicas });
    return;
  }
  try {
    await jsm.streams.add({
      name,
      subjects: [prefixed(prefix, 'grants.>')],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      max_age: 7 * DAY_NS,
      duplicate_window: 2 * 60 * 1e9,
      num_replicas: replicas,
    });
  } catch (err) {
    // Another replica may have created it between our two calls.
    await jsm.streams.info(name).catch(() => {
      throw err;
    });
  }
}
