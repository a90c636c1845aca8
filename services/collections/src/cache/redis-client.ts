import { Redis } from 'ioredis';
import type { Logger, Worker } from '@ccs/shared';

/**
 * The Redis connection of the read cache. Redis is an accelerator here, not a dependency: commands
 * fail fast while it is away (no offline queue, short timeout) and reads fall back to Postgres.
 * The returned worker closes the connection when the service stops.
 */
export async function createCacheRedis(url: string, log: Logger): Promise<{ redis: Redis; worker: Worker }> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 2000,
  });
  let warned = false;
  redis.on('error', (err) => {
    if (!warned) log.warn({ err: String(err) }, 'redis unavailable; collection reads go to Postgres until it returns');
    warned = true;
  });
  redis.on('ready', () => (warned = false));
  // A failed first connection is retried in the background by ioredis.
  await redis.connect().catch(() => undefined);
  return {
    redis,
    worker: {
      start() {},
      async stop() {
        await redis.quit().catch(() => redis.disconnect());
      },
    },
  };
}
