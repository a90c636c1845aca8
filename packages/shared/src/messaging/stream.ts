import { RetentionPolicy, StorageType, type JetStreamManager } from 'nats';
import { prefixed, streamName } from '../runtime/subjects.js';

const DAY_NS = 24 * 60 * 60 * 1e9;

/** Name of the stack's durable grants stream. */
export function grantsStream(prefix: string): string {
  return streamName(prefix, 'GRANTS');
}

/** Creates the grants stream (`<prefix>.grants.>`) if missing; every service may call it. */
export async function ensureGrantsStream(jsm: JetStreamManager, prefix: string): Promise<void> {
  const name = grantsStream(prefix);
  try {
    await jsm.streams.info(name);
  } catch {
    try {
      await jsm.streams.add({
        name,
        subjects: [prefixed(prefix, 'grants.>')],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        max_age: 7 * DAY_NS,
        duplicate_window: 2 * 60 * 1e9,
      });
    } catch (err) {
      // Another replica may have created it between our two calls.
      await jsm.streams.info(name).catch(() => {
        throw err;
      });
    }
  }
}
