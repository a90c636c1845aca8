import { connect, type JetStreamClient, type JetStreamManager, type NatsConnection, type Service } from 'nats';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type pg from 'pg';
import { z } from 'zod';
import type { BaseConfig } from '../config/config.js';
import { createLogger, type Logger } from '../config/logger.js';
import { defineSubject } from '../contracts/subject.js';
import { createPool } from '../db/pool.js';
import { migrateSchema } from '../db/migrate.js';
import { AppError, toAppError } from '../errors/app-error.js';
import { ensureGrantsStream } from '../messaging/stream.js';
import { startConsumer, type ConsumerDef, type RunningConsumer } from '../messaging/consumer.js';
import { Bus } from './bus.js';
import { contextFromHeaders, decodeJson, encodeJson } from './codec.js';
import type { Endpoint } from './endpoint.js';
import { describeInfraError, InfraError } from './infra-errors.js';
import { prefixed } from './subjects.js';
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
}

/** A background task owned by a service (relays, sweepers). */
export interface Worker {
  start(): void;
  stop(): Promise<void>;
}

/** What a service contributes: its endpoints, durable consumers and background workers. */
export interface ServiceParts {
  endpoints: Endpoint<any>[];
  consumers?: ConsumerDef<any>[];
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
  defineSubject(`${service}.v1.health`, z.object({}).passthrough(), z.object({ service: z.string(), ok: z.boolean() }));

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
 * Starts a service: checks Postgres and NATS, migrates the schema, ensures the grants stream,
 * registers every endpoint in the service's queue group (validated in and out, typed errors),
 * starts consumers and workers. `stop` stops taking messages, lets in-flight ones finish, drains.
 */
export async function startService<C extends BaseConfig>(def: ServiceDefinition<C>, config: C, logger?: Logger): Promise<RunningService<C>> {
  const log = logger ?? createLogger(def.name, config.LOG_LEVEL);
  const pool = createPool(config.DATABASE_URL, def.schema, config.PG_POOL_MAX);
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new InfraError(describeInfraError('Postgres', config.DATABASE_URL, err));
  }
  let nc: NatsConnection;
  try {
    nc = await connect({ servers: config.NATS_URL, name: `${config.NATS_PREFIX}${def.name}`, maxReconnectAttempts: -1 });
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new InfraError(describeInfraError('NATS', config.NATS_URL, err));
  }
  await migrateService(def, config.DATABASE_URL);
  const jsm = await nc.jetstreamManager().catch((err) => {
    throw new InfraError(`NATS at ${config.NATS_URL} has no JetStream (${String(err)}): start nats-server with -js.`);
  });
  await ensureGrantsStream(jsm, config.NATS_PREFIX);
  const js = nc.jetstream();
  const bus = new Bus(nc, config.NATS_PREFIX, config.NATS_REQUEST_TIMEOUT_MS);
  const deps: ServiceDeps<C> = { config, log, pool, nc, js, jsm, bus };
  const parts = await def.build(deps);

  const inFlight = new Set<Promise<unknown>>();
  const service = await nc.services.add({
    name: (config.NATS_PREFIX ? `${config.NATS_PREFIX}-` : '') + def.name,
    version: def.version,
    queue: (config.NATS_PREFIX ? `${config.NATS_PREFIX}-` : '') + def.name,
  });
  const health = healthSubject(def.name);
  const all: Endpoint<any>[] = [
    ...parts.endpoints,
    { contract: health, handle: async () => ({ service: def.name, ok: await isReady(pool, parts) }) },
  ];
  for (const ep of all) addEndpoint(service, ep, config.NATS_PREFIX, log, inFlight);

  const consumers: RunningConsumer[] = [];
  for (const c of parts.consumers ?? []) consumers.push(await startConsumer(c, { nc, js, jsm, pool, prefix: config.NATS_PREFIX, log }));
  for (const w of parts.workers ?? []) w.start();
  const healthServer = config.HEALTH_PORT ? startHealthServer(config.HEALTH_PORT, pool, parts) : undefined;
  log.info({ endpoints: all.length, consumers: consumers.length }, `${def.name} service started`);

  let stopping: Promise<void> | undefined;
  return {
    deps,
    parts,
    stop() {
      stopping ??= (async () => {
        await service.stop().catch(() => undefined);
        await Promise.allSettled([...inFlight]);
        await Promise.all(consumers.map((c) => c.stop()));
        await Promise.all((parts.workers ?? []).map((w) => w.stop()));
        await nc.drain().catch(() => undefined);
        await pool.end().catch(() => undefined);
        healthServer?.close();
        log.info(`${def.name} service stopped`);
      })();
      return stopping;
    },
  };
}

function addEndpoint(service: Service, ep: Endpoint<any>, prefix: string, log: Logger, inFlight: Set<Promise<unknown>>): void {
  const subject = prefixed(prefix, ep.contract.subject);
  service.addEndpoint(ep.contract.subject.replace(/\./g, '_'), {
    subject,
    handler: (err, msg) => {
      if (err) {
        log.error({ err: String(err), subject }, 'endpoint subscription failed');
        return;
      }
      const work = (async () => {
        const ctx = contextFromHeaders(msg.headers);
        try {
          const req = ep.contract.request.safeParse(decodeJson(msg.data));
          if (!req.success) {
            throw AppError.badRequest('invalid_message', `message on ${ep.contract.subject} failed validation`);
          }
          const reply = await ep.handle(req.data, ctx);
          const checked = ep.contract.reply.safeParse(reply);
          if (!checked.success) {
            log.error({ subject, requestId: ctx.requestId, issues: checked.error.issues }, 'handler reply broke its contract');
            throw AppError.internal();
          }
          msg.respond(encodeJson(checked.data));
        } catch (e) {
          const appErr = toAppError(e);
          if (appErr.status >= 500) log.error({ err: e, subject, requestId: ctx.requestId }, 'handler failed');
          msg.respondError(appErr.status, appErr.code, encodeJson({ errors: appErr.errors }));
        }
      })();
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    },
  });
}

async function isReady(pool: pg.Pool, parts: ServiceParts): Promise<boolean> {
  try {
    await pool.query('SELECT 1');
    return parts.ready ? await parts.ready() : true;
  } catch {
    return false;
  }
}

function startHealthServer(port: number, pool: pg.Pool, parts: ServiceParts): Server {
  const server = createServer((req, res) => {
    if (req.url === '/livez') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else if (req.url === '/readyz') {
      void isReady(pool, parts).then((ok) =>
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ok ? 'ready' : 'not ready' })),
      );
    } else {
      res.writeHead(404).end();
    }
  });
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
  const shutdown = (signal: string) => {
    running.deps.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 25_000);
    force.unref();
    void running.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

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
      await pool.query('SELECT 1');
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
