import { connect } from 'nats';
import { Redis } from 'ioredis';
import pg from 'pg';
import { describeInfraError } from '../../packages/shared/src/runtime/infra-errors.js';

/** Where the stack's infrastructure lives (the same variables and defaults the services read). */
export interface InfraUrls {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
}

const PROBE_TIMEOUT_MS = 4000;

/** Rejects after `ms`, so a black-holed address cannot stall the launcher. */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function probePostgres(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await within(
      PROBE_TIMEOUT_MS,
      client.connect().then(() => client.query('SELECT 1')),
    );
    return undefined;
  } catch (err) {
    return describeInfraError('Postgres', url, err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function probeNats(url: string): Promise<string | undefined> {
  let nc;
  try {
    nc = await within(PROBE_TIMEOUT_MS, connect({ servers: url, reconnect: false, timeout: PROBE_TIMEOUT_MS }));
  } catch (err) {
    return describeInfraError('NATS', url, err);
  }
  try {
    // Asking for the account info fails when the server runs without JetStream.
    await within(
      PROBE_TIMEOUT_MS,
      nc.jetstreamManager().then((jsm) => jsm.getAccountInfo()),
    );
    return undefined;
  } catch {
    return `NATS at ${url} runs without JetStream: restart it with -js (nats-server -js, or docker compose up -d nats).`;
  } finally {
    await nc.close().catch(() => undefined);
  }
}

async function probeRedis(url: string): Promise<string | undefined> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // ioredis rejects with "Connection is closed"; the socket error says why.
  let cause: unknown;
  redis.on('error', (err) => (cause ??= err));
  try {
    await within(
      PROBE_TIMEOUT_MS,
      redis.connect().then(() => redis.ping()),
    );
    return undefined;
  } catch (err) {
    return describeInfraError('Redis', url, cause ?? err);
  } finally {
    redis.disconnect();
  }
}

/**
 * Checks Postgres, NATS (with JetStream) and Redis in parallel. Returns one line per missing
 * piece, each saying which it is and how to start it; an empty list means all three answer.
 */
export async function checkInfrastructure(urls: InfraUrls): Promise<string[]> {
  const results = await Promise.all([probePostgres(urls.databaseUrl), probeNats(urls.natsUrl), probeRedis(urls.redisUrl)]);
  return results.filter((line): line is string => line !== undefined);
}
