/** The settings the cluster gives its replicas (docs/deploy.md, "The production topology on one machine"). */
import { randomBytes } from 'node:crypto';
import type { ServiceName } from '../start/service-process.js';
import type { Bouncer, SchemaOwner } from './postgres.js';

/** The settings every replica gets (docs/deploy.md, "The production topology on one machine"). */
export function commonEnv(o: {
  natsUrl: string;
  redisUrl: string;
  redisPrefix: string;
  apiKey: string;
  secretKey: string;
  logLevel?: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    NATS_URL: o.natsUrl,
    NATS_PREFIX: '',
    JETSTREAM_REPLICAS: '3',
    REDIS_URL: o.redisUrl,
    // One prefix for the whole stack: the replicas share the rate limits and caches in Redis.
    REDIS_PREFIX: o.redisPrefix,
    PG_SEARCH_PATH: 'role',
    PG_PREPARED_STATEMENTS: 'off',
    HEALTH_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: o.logLevel ?? 'info',
    CHESTS_DEMO_API_KEY: o.apiKey,
    CHESTS_DEMO_SECRET_KEY: o.secretKey,
    // One session key for every gateway replica: a console cookie one sets, the other reads.
    CONSOLE_SESSION_KEY: randomBytes(32).toString('hex'),
    ...o.extra,
  };
}

/** Per service, the settings behind PgBouncer (docs/deploy.md, "Postgres"). */
export function serviceEnv(
  name: ServiceName,
  common: Record<string, string>,
  bouncer: Bouncer,
  extra: { port?: number; metricsPort?: number },
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...common };
  if (name === 'gateway') {
    // The gateway owns no schema and never connects to Postgres.
    delete env.DATABASE_URL;
    env.PORT = String(extra.port);
    env.METRICS_PORT = String(extra.metricsPort);
  } else {
    env.DATABASE_URL = bouncer.url(name as SchemaOwner);
    // Migrated beforehand directly on Postgres (--migrate-only): no session advisory lock through PgBouncer.
    env.MIGRATE_ON_START = 'off';
  }
  return env;
}
