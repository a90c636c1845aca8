import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { connect, type NatsConnection } from 'nats';
import { Redis } from 'ioredis';
import { Bus, startService, type BaseConfig, type Logger, type RunningService, type ServiceDefinition } from '@ccs/shared';
import { createMigratedDatabase, deleteTestStreams, testInfra } from '@ccs/shared/testing';
import type { z } from 'zod';
import { buildApp } from '../../services/gateway/src/app.js';
import { GatewayConfigSchema, type GatewayConfig } from '../../services/gateway/src/config.js';
import { playersService } from '../../services/players/src/service.js';
import { PlayersConfigSchema } from '../../services/players/src/config.js';
import { walletService } from '../../services/wallet/src/service.js';
import { WalletConfigSchema } from '../../services/wallet/src/config.js';
import { chestsService } from '../../services/chests/src/service.js';
import { ChestsConfigSchema } from '../../services/chests/src/config.js';
import { collectionsService } from '../../services/collections/src/service.js';
import { CollectionsConfigSchema } from '../../services/collections/src/config.js';
import { egressService } from '../../services/egress/src/service.js';
import { EgressConfigSchema } from '../../services/egress/src/config.js';
import { storeService } from '../../services/store/src/service.js';
import { StoreConfigSchema } from '../../services/store/src/config.js';

export type ServiceName = 'players' | 'wallet' | 'chests' | 'collections' | 'egress' | 'store';

const SERVICES: Record<ServiceName, { def: ServiceDefinition<any>; schema: z.ZodType }> = {
  players: { def: playersService, schema: PlayersConfigSchema },
  wallet: { def: walletService, schema: WalletConfigSchema },
  chests: { def: chestsService, schema: ChestsConfigSchema },
  collections: { def: collectionsService, schema: CollectionsConfigSchema },
  egress: { def: egressService, schema: EgressConfigSchema },
  store: { def: storeService, schema: StoreConfigSchema },
};

const ALL: ServiceName[] = ['players', 'wallet', 'chests', 'collections', 'egress', 'store'];

/** One isolated stack for a test file: own database, NATS prefix and Redis prefix. */
export interface TestStack {
  app: FastifyInstance;
  env: Record<string, string>;
  /** The demo app's API key (CHESTS_DEMO_API_KEY of this stack). */
  apiKey: string;
  bus: Bus;
  nc: NatsConnection;
  redis: Redis;
  services: Partial<Record<ServiceName, RunningService<BaseConfig>>>;
  inject(opts: InjectOptions): Promise<LightMyRequestResponse>;
  stopService(name: ServiceName): Promise<void>;
  startService(name: ServiceName): Promise<RunningService<BaseConfig>>;
  close(): Promise<void>;
}

/**
 * Starts the whole stack in this process against real Postgres, NATS and Redis: the six
 * services (or those named) and the gateway app, which tests call through `inject`.
 */
export async function startStack(
  opts: {
    env?: Record<string, string>;
    services?: ServiceName[];
    /** The logger of each service and of the gateway (observability tests capture the lines). */
    logger?: (service: ServiceName | 'gateway') => Logger;
  } = {},
): Promise<TestStack> {
  const infra = await testInfra();
  // players first: it creates the demo app that the others receive.
  const names = opts.services ?? ALL;
  // The schemas of the services it starts, migrated in that order; one started later
  // (startService) migrates its own as it starts. A database the test names (opts.env) is its own.
  const db = opts.env?.DATABASE_URL
    ? undefined
    : await createMigratedDatabase(
        infra,
        names.map((n) => SERVICES[n].def),
      );
  const id = randomBytes(4).toString('hex');
  const apiKey = `demo_${randomBytes(16).toString('hex')}`;
  const env: Record<string, string> = {
    DATABASE_URL: db?.url ?? '',
    NATS_URL: infra.natsUrl,
    REDIS_URL: infra.redisUrl,
    NATS_PREFIX: `t${id}`,
    REDIS_PREFIX: `t${id}:`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    CHESTS_DEMO_API_KEY: apiKey,
    RATE_LIMIT: 'off',
    ARGON2_MEMORY_KIB: '1024',
    ARGON2_TIME_COST: '1',
    PG_POOL_MAX: '5',
    ...opts.env,
  };
  const services: TestStack['services'] = {};
  const start = async (name: ServiceName) => {
    const s = SERVICES[name];
    // A schema of the template is migrated already: that service's start skips the migrations' checks.
    const migrated = { MIGRATE_ON_START: db && names.includes(name) ? 'off' : 'on', ...env };
    const running = await startService(s.def, s.schema.parse(migrated) as BaseConfig, opts.logger?.(name));
    services[name] = running;
    return running;
  };
  for (const n of names) await start(n);

  const config: GatewayConfig = GatewayConfigSchema.parse(env);
  const nc = await connect({ servers: infra.natsUrl });
  const redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: 1 });
  const bus = new Bus(nc, config.NATS_PREFIX, config.NATS_REQUEST_TIMEOUT_MS, { readTimeoutMs: config.NATS_READ_TIMEOUT_MS });
  const app = await buildApp({ config, bus, redis, logger: opts.logger?.('gateway') });
  await app.ready();

  return {
    app,
    env,
    apiKey,
    bus,
    nc,
    redis,
    services,
    inject: (o) => app.inject(o),
    async stopService(name) {
      await services[name]?.stop();
      delete services[name];
    },
    startService: start,
    async close() {
      await app.close();
      await Promise.all(Object.values(services).map((s) => s?.stop()));
      await nc.close();
      const keys = await redis.keys(`${env.REDIS_PREFIX}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
      await deleteTestStreams(infra.natsUrl, env.NATS_PREFIX!);
      await db?.drop();
    },
  };
}

/** The least time eventually() waits before it gives up. */
const EVENTUALLY_MIN_MS = 60_000;

/** Headers for a JSON:API call of the demo app, optionally as a player. */
export function jsonApiHeaders(apiKey: string, token?: string): Record<string, string> {
  const h: Record<string, string> = { apikey: apiKey, 'content-type': 'application/vnd.api+json', accept: 'application/vnd.api+json' };
  if (token) h.authorization = `Bearer ${token}`;
  return h;
}

/**
 * Polls until check passes (for effects that land asynchronously). The bound only ends a wait for
 * something that will not come: whatever a caller names, it is at least EVENTUALLY_MIN_MS, so a
 * loaded machine's slower pace never fails a test; a passing check returns at once anyway.
 */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = EVENTUALLY_MIN_MS, everyMs = 100): Promise<T> {
  const deadline = Date.now() + Math.max(timeoutMs, EVENTUALLY_MIN_MS);
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}
