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

/**
 * Where the tests' infrastructure comes from (`TEST_INFRA`):
 * - `auto` (default): DATABASE_URL, NATS_URL and REDIS_URL where set, else the standard local
 *   ports; containers only when something does not answer there;
 * - `local`: those URLs only; a piece that does not answer fails the run, naming it;
 * - `containers`: always fresh containers (testcontainers; needs a Docker engine), whatever runs locally.
 */
export type TestInfraMode = 'auto' | 'local' | 'containers';

/** The mode `TEST_INFRA` asks for; anything else is refused with the accepted values. */
export function testInfraMode(env: Record<string, string | undefined> = process.env): TestInfraMode {
  const mode = (env.TEST_INFRA ?? 'auto').trim() || 'auto';
  if (mode === 'auto' || mode === 'local' || mode === 'containers') return mode;
  throw new Error(`TEST_INFRA="${mode}" is not a mode: use auto (the default), local or containers.`);
}

/** Set by vitest's global setup once it resolved the infrastructure: workers take the URLs as they are. */
export const RESOLVED_MARKER = 'CCS_TEST_INFRA_RESOLVED';

/** The infrastructure of a run, where it came from, and (for containers) how to stop it. */
export interface ResolvedInfra {
  urls: InfraUrls;
  source: 'local' | 'containers';
  stop?: () => Promise<void>;
}

/** The URLs the environment names, or the standard local ports. */
function localUrls(env: Record<string, string | undefined>): InfraUrls {
  return {
    databaseUrl: env.DATABASE_URL ?? DEFAULTS.databaseUrl,
    natsUrl: env.NATS_URL ?? DEFAULTS.natsUrl,
    redisUrl: env.REDIS_URL ?? DEFAULTS.redisUrl,
  };
}

/** Whether something accepts TCP connections at the URL's host and port. */
function reachable(url: string, fallbackPort: number): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port || fallbackPort), timeout: 1000 });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

/** Which of the local pieces do not answer. */
async function localProblems(urls: InfraUrls): Promise<string[]> {
  const up = await Promise.all([
    reachable(urls.databaseUrl, 5432),
    reachable(urls.natsUrl.replace(/^nats:/, 'http:'), 4222),
    reachable(urls.redisUrl, 6379),
  ]);
  const names: [string, string][] = [
    ['Postgres', urls.databaseUrl],
    ['NATS', urls.natsUrl],
    ['Redis', urls.redisUrl],
  ];
  return names.filter((_, i) => !up[i]).map(([what, url]) => `${what} at ${url.replace(/\/\/[^@/]*@/, '//***@')}`);
}

/** Resolves the infrastructure for `mode`, starting containers when it must. */
export async function resolveTestInfra(mode: TestInfraMode, env: Record<string, string | undefined> = process.env): Promise<ResolvedInfra> {
  if (mode !== 'containers') {
    const urls = localUrls(env);
    const down = await localProblems(urls);
    if (!down.length) return { urls, source: 'local' };
    if (mode === 'local') {
      throw new Error(
        `TEST_INFRA=local, but ${down.join(', ')} does not answer: start it (npm start's checks say how), set its URL, or use TEST_INFRA=containers.`,
      );
    }
  }
  const { startContainers } = await import('./containers.js');
  const started = await startContainers();
  return {
    urls: { databaseUrl: started.databaseUrl, natsUrl: started.natsUrl, redisUrl: started.redisUrl },
    source: 'containers',
    stop: () => started.stop(),
  };
}

let resolved: Promise<InfraUrls> | undefined;

/**
 * The infrastructure for tests. Under vitest the global setup (test/support/global-infra.ts)
 * resolved it once for the whole run (and stops any containers at its end): its URLs are in the
 * environment. Elsewhere (the bench, the chaos suite) it is resolved here by `TEST_INFRA`.
 */
export function testInfra(): Promise<InfraUrls> {
  resolved ??= (async () => {
    if (process.env[RESOLVED_MARKER]) return localUrls(process.env);
    return (await resolveTestInfra(testInfraMode())).urls;
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
