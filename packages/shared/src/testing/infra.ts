import { Redis } from 'ioredis';
import { connect } from 'nats';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { BaseConfigSchema, type BaseConfig } from '../config/config.js';
import { grantsStream } from '../messaging/stream.js';

/** URLs of the real Postgres, NATS and Redis the tests run against. */
export interface InfraUrls {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
}

const DEFAULTS: InfraUrls = {
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
  natsUrl: 'nats://127.0.0.1:4222',
  redisUrl: 'redis://127.0.0.1:6379',
};

let resolved: Promise<InfraUrls> | undefined;

function reachable(url: string, fallbackPort: number): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port || fallbackPort), timeout: 1000 });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

/**
 * The infrastructure for tests: URLs from DATABASE_URL, NATS_URL and REDIS_URL where set; else
 * the local standard ports when something answers there; else containers started with
 * testcontainers (needs a Docker engine).
 */
export function testInfra(): Promise<InfraUrls> {
  resolved ??= (async () => {
    const fromEnv: InfraUrls = {
      databaseUrl: process.env.DATABASE_URL ?? DEFAULTS.databaseUrl,
      natsUrl: process.env.NATS_URL ?? DEFAULTS.natsUrl,
      redisUrl: process.env.REDIS_URL ?? DEFAULTS.redisUrl,
    };
    const up = await Promise.all([
      reachable(fromEnv.databaseUrl, 5432),
      reachable(fromEnv.natsUrl.replace(/^nats:/, 'http:'), 4222),
      reachable(fromEnv.redisUrl, 6379),
    ]);
    if (up.every(Boolean)) return fromEnv;
    const { startContainers } = await import('./containers.js');
    return startContainers();
  })();
  return resolved;
}

/** A fresh, empty database for one test file; `drop` removes it. */
export async function createTestDatabase(infra: InfraUrls): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `ccs_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: infra.databaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(infra.databaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: infra.databaseUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Config for one isolated test stack: its own database, NATS prefix and Redis prefix. */
export function isolatedConfig(infra: InfraUrls, databaseUrl: string, overrides: Record<string, string> = {}): BaseConfig & Record<string, unknown> {
  const id = randomBytes(4).toString('hex');
  const env = {
    DATABASE_URL: databaseUrl,
    NATS_URL: infra.natsUrl,
    REDIS_URL: infra.redisUrl,
    NATS_PREFIX: `t${id}`,
    REDIS_PREFIX: `t${id}:`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    NATS_REQUEST_TIMEOUT_MS: '5000',
    ...overrides,
  };
  return { ...env, ...BaseConfigSchema.parse(env) };
}

/** Deletes the JetStream stream of a test prefix (its consumers go with it). */
export async function deleteTestStreams(natsUrl: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(grantsStream(prefix)).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

/** A TCP port free on 127.0.0.1 right now (for a private server or a listener of a test). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Removes every Redis key under `prefix` (a test, bench or chaos run's own), so a run leaves nothing behind. */
export async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
