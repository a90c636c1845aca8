import type { JetStreamClient, JetStreamManager, NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type pg from 'pg';
import { z } from 'zod';
import type { BaseConfig } from '../config/config.js';
import { createLogger, type Logger } from '../config/logger.js';
import { defineQuery } from '../contracts/subject.js';
import { createPool } from '../db/pool.js';
import { migrateSchema } from '../db/migrate.js';
import { pingDatabase } from '../db/probes.js';
import { GrantsJanitor } from '../messaging/stream.js';
import { startConsumer, type RunningConsumer } from '../messaging/consumer.js';
import type { ConsumerDef } from '../messaging/consumer-def.js';
import { OutboxRelay } from '../messaging/outbox.js';
import { ServiceMetrics } from '../observability/metrics.js';
import { runInScope } from '../observability/scope.js';
import { initTracing, shutdownTracing } from '../observability/tracing.js';
import { addEndpoint } from './add-endpoint.js';
import { Bus } from './bus.js';
import { connectNats, openDatabase, prepareJetStream } from './connect-infra.js';
import { stopGracefully } from './stop-service.js';
import type { Endpoint } from './endpoint.js';
import { describeInfraError, InfraError } from './infra-errors.js';
import { fileURLToPath } from 'node:url';

/** Everything a service's handlers may depend on, built once by the runtime. */
export interface ServiceDeps<C extends BaseConfig = BaseConfig> {
  config: C;
  log: Logger;
  pool: pg.Pool;
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  bus: Bus;
  /** This service's Prometheus registry and metrics (served on /metrics of HEALTH_PORT). */
  metrics: ServiceMetrics;
}

/** A background task owned by a service (relays, sweepers). */
export interface Worker {
  start(): void;
  stop(): Promise<void>;
}

/** What a service contributes: its endpoints, durable consumers and background workers. */
export interface ServiceParts {
  endpoints: Endpoint[];
  consumers?: ConsumerDef[];
  workers?: Worker[];
  /** Extra readiness check (beyond Postgres and NATS). */
  ready?: () => Promise<boolean>;
}

/** A service's definition: name, schema, migrations, and how to build its parts from deps. */
export interface ServiceDefinition<C extends BaseConfig = BaseConfig> {
  name: string;
  version: string;
  /** Postgres schema owned by this service. */
  schema: string;
  /** Absolute path of the service's `migrations/` folder. */
  migrationsDir: string;
  build(deps: ServiceDeps<C>): Promise<ServiceParts> | ServiceParts;
}

/** Health subject every service answers; the gateway's /readyz asks each one. */
export const healthSubject = (service: string) =>
  defineQuery(`${service}.v1.health`, z.object({}).passthrough(), z.object({ service: z.string(), ok: z.boolean() }), { callers: ['gateway'] });

const MESSAGING_MIGRATIONS = fileURLToPath(new URL('../../migrations/messaging', import.meta.url));

/** Applies a service's migrations (the shared messaging tables, then its own) to its schema. */
export async function migrateService(def: Pick<ServiceDefinition, 'schema' | 'migrationsDir'>, databaseUrl: string): Promise<string[]> {
  const shared = await migrateSchema(databaseUrl, def.schema, MESSAGING_MIGRATIONS, 'messaging_migrations');
  const own = await migrateSchema(databaseUrl, def.schema, def.migrationsDir);
  return [...shared, ...own];
}

/** A started service. */
export interface RunningService<C extends BaseConfig = BaseConfig> {
  deps: ServiceDeps<C>;
  parts: ServiceParts;
  stop(): Promise<void>;
}

/**
 * Starts a service: checks Postgres and NATS, migrates the schema (unless MIGRATE_ON_START=off), ensures the grants stream,
 * registers every endpoint in the service's queue group (validated in and out, typed errors),
 * starts consumers and workers. `stop` stops taking messages, lets in-flight ones finish, drains.
 */
export async function startService<C extends BaseConfig>(def: ServiceDefinition<C>, config: C, logger?: Logger): Promise<RunningService<C>> {
  const log = logger ?? createLogger(def.name, config.LOG_LEVEL);
  const pool = await openDatabase(def.schema, config);
  const link = await connectNats(def.name, config, pool);
  const nc = link.nc;
  if (config.MIGRATE_ON_START === 'on') await migrateService(def, config.DATABASE_URL);
  const jsm = await prepareJetStream(link, config, log);
  const js = nc.jetstream();
  const bus = new Bus(nc, config.NATS_PREFIX, config.NATS_REQUEST_TIMEOUT_MS, { readTimeoutMs: config.NATS_READ_TIMEOUT_MS });
  const metrics = new ServiceMetrics(def.name);
  metrics.observePool(pool);
  const deps: ServiceDeps<C> = { config, log, pool, nc, js, jsm, bus, metrics };
  const parts = await def.build(deps);
  metrics.observeOutbox((parts.workers ?? []).filter((w): w is OutboxRelay => w instanceof OutboxRelay));

  const inFlight = new Set<Promise<unknown>>();
  const { service, count } = await addServiceEndpoints(def, deps, parts, inFlight);
  const consumers = await startBackground(deps, parts, link.ownStreamUser);
  const healthServer = config.HEALTH_PORT ? startHealthServer(config.HEALTH_PORT, pool, nc, parts, metrics, log) : undefined;
  log.info({ endpoints: count, consumers: consumers.length }, `${def.name} service started`);

  let stopping: Promise<void> | undefined;
  return {
    deps,
    parts,
    stop() {
      stopping ??= stopGracefully({
        name: def.name,
        log,
        markNotReady: () => (parts.ready = async () => false),
        endpoints: service,
        inFlight,
        consumers,
        workers: parts.workers ?? [],
        nc,
        pool,
        healthServer,
      });
      return stopping;
    },
  };
}

/**
 * Adds the service to NATS' Service API (one queue group per service) with every endpoint of
 * `parts` and the health subject; each handler's promise is kept in `inFlight` while it runs.
 */
async function addServiceEndpoints<C extends BaseConfig>(
  def: ServiceDefinition<C>,
  deps: ServiceDeps<C>,
  parts: ServiceParts,
  inFlight: Set<Promise<unknown>>,
) {
  const { config, nc, pool, log, metrics } = deps;
  const service = await nc.services.add({
    name: (config.NATS_PREFIX ? `${config.NATS_PREFIX}-` : '') + def.name,
    version: def.version,
    queue: (config.NATS_PREFIX ? `${config.NATS_PREFIX}-` : '') + def.name,
    description: `Collectible Chest Service: ${def.name}`,
    // nats.js times only the synchronous part of a handler and never sees our error replies.
    statsHandler: async (e) => metrics.tally(String(e.metadata?.contract ?? e.subject)),
  });
  const health = healthSubject(def.name);
  const all: Endpoint[] = [...parts.endpoints, { contract: health, handle: async () => ({ service: def.name, ok: await isReady(pool, nc, parts) }) }];
  for (const ep of all)
    addEndpoint(service, ep, { service: def.name, prefix: config.NATS_PREFIX, log, metrics, inFlight, traced: ep.contract !== health });
  return { service, count: all.length };
}

/** Starts the durable consumers and the workers (with the grants janitor where this service may purge). */
async function startBackground(deps: ServiceDeps, parts: ServiceParts, ownStreamUser: boolean): Promise<RunningConsumer[]> {
  const { config, nc, js, jsm, pool, log, metrics } = deps;
  const consumers: RunningConsumer[] = [];
  for (const c of parts.consumers ?? []) consumers.push(await startConsumer(c, { nc, js, jsm, pool, prefix: config.NATS_PREFIX, log, metrics }));
  // Without NATS users every service sweeps the grants stream of what all consumers acknowledged
  // (idempotent); with them, only the grants keeper may purge it.
  parts.workers = [
    ...(parts.workers ?? []),
    ...(ownStreamUser ? [] : [new GrantsJanitor(jsm, config.NATS_PREFIX, config.GRANTS_KEEP_ACKED_HOURS * 3_600_000, log)]),
  ];
  // Timers a worker starts keep this scope, so what its passes record lands in this service's metrics.
  for (const w of parts.workers) runInScope({ metrics }, () => w.start());
  return consumers;
}

/**
 * Ready: Postgres answers, NATS answers a round trip (both within a second), and the service's
 * own check passes. Migrations ran before the service started taking messages.
 */
async function isReady(pool: pg.Pool, nc: NatsConnection, parts: ServiceParts): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('readiness timed out')), 1000)));
  try {
    await Promise.race([Promise.all([pingDatabase(pool), nc.isClosed() ? Promise.reject(new Error('NATS closed')) : nc.flush()]), timeout]);
    return parts.ready ? await parts.ready() : true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

function startHealthServer(port: number, pool: pg.Pool, nc: NatsConnection, parts: ServiceParts, metrics: ServiceMetrics, log: Logger): Server {
  const server = createServer((req, res) => {
    if (req.url === '/livez') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else if (req.url === '/readyz') {
      void isReady(pool, nc, parts).then((ok) =>
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ok ? 'ready' : 'not ready' })),
      );
    } else if (req.url?.split('?')[0] === '/metrics') {
      void metrics.render().then(
        (m) => res.writeHead(200, { 'content-type': m.contentType }).end(m.body),
        (err) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics unavailable: ${String(err)}`),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  // A taken port (two services in one process, another process on the host network) must not
  // take the service down: it runs on without its HTTP health server and says so once.
  server.on('error', (err: NodeJS.ErrnoException) =>
    log.error(
      { port, code: err.code },
      `health server cannot listen on port ${port} (${err.code ?? String(err)}); running without /livez, /readyz and /metrics`,
    ),
  );
  server.listen(port);
  return server;
}

/**
 * The entry point of every service process: loads config, starts, and stops cleanly on SIGTERM
 * or SIGINT. A missing Postgres or NATS prints one line saying how to start it, and exits 1.
 */
export async function runMain<C extends BaseConfig>(def: ServiceDefinition<C>, loadServiceConfig: () => C): Promise<void> {
  if (process.argv.includes('--migrate-only')) return migrateOnly(def, loadServiceConfig);
  let running: RunningService<C>;
  try {
    initTracing(def.name); // observability: OFF unless the OTEL_* variables ask for it
    running = await startService(def, loadServiceConfig());
  } catch (err) {
    const e = err as Error;
    if (e.name === 'InfraError' || e.name === 'ConfigError') {
      console.error(`[${def.name}] ${e.message}`);
    } else {
      console.error(`[${def.name}] failed to start:`, err);
    }
    process.exit(1);
  }
  const log = running.deps.log;
  let signalled: NodeJS.Signals | undefined;
  const shutdown = (signal: NodeJS.Signals) => {
    // Ctrl-C under `npm start` arrives twice (terminal and launcher): one graceful stop is enough.
    if (signalled) return void log.info({ signal }, `already shutting down (${signalled})`);
    signalled = signal;
    log.info({ signal, boundMs: SHUTDOWN_BOUND_MS }, 'shutting down: draining endpoints and consumers');
    const force = setTimeout(() => {
      log.error(`did not stop within ${SHUTDOWN_BOUND_MS / 1000} s; exiting anyway (JetStream redelivers what was not acked)`);
      process.exit(1);
    }, SHUTDOWN_BOUND_MS);
    force.unref();
    void running
      .stop()
      .then(shutdownTracing /* observability: export the last spans */)
      .then(
        () => process.exit(0),
        (err) => {
          log.error({ err: String(err) }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

/**
 * Hard bound on a graceful stop, below Kubernetes' default 30 s grace period (the manifests give
 * more): a handler stuck past it is cut off and the process exits 1.
 */
export const SHUTDOWN_BOUND_MS = 25_000;

export const newRequestId = (): string => randomUUID();

/**
 * `main.js --migrate-only`: applies the service's migrations and exits (0 when done), for a
 * Kubernetes migration Job or init container that runs before the replicas start.
 */
async function migrateOnly<C extends BaseConfig>(def: ServiceDefinition<C>, loadServiceConfig: () => C): Promise<void> {
  try {
    const config = loadServiceConfig();
    const pool = createPool(config.DATABASE_URL, def.schema, 1);
    try {
      await pingDatabase(pool);
    } catch (err) {
      throw new InfraError(describeInfraError('Postgres', config.DATABASE_URL, err));
    } finally {
      await pool.end().catch(() => undefined);
    }
    const applied = await migrateService(def, config.DATABASE_URL);
    console.log(`[${def.name}] schema "${def.schema}" is up to date (${applied.length} migration(s) applied now)`);
    process.exit(0);
  } catch (err) {
    const e = err as Error;
    console.error(`[${def.name}] migration failed: ${e.name === 'InfraError' || e.name === 'ConfigError' ? e.message : String(err)}`);
    process.exit(1);
  }
}
