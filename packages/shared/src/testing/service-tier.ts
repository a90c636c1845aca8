import { connect, headers as natsHeaders, type NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import type { BaseConfig } from '../config/config.js';
import type { z } from 'zod';
import type { EventContract, SubjectContract } from '../contracts/subject.js';
import { AppError, isPermanentFailure, toAppError } from '../errors/app-error.js';
import { serviceErrorCode } from '../runtime/add-endpoint.js';
import { watchApplied } from '../messaging/processed.js';
import { Bus, ERROR_HEADER } from '../runtime/bus.js';
import { contextFromHeaders, decodeJson, encodeJson } from '../runtime/codec.js';
import type { Endpoint } from '../runtime/endpoint.js';
import { startService, type RunningService, type ServiceDefinition } from '../runtime/service.js';
import { prefixed } from '../runtime/subjects.js';
import { deleteRedisKeys, deleteTestStreams, isolatedConfig, testInfra } from './infra.js';
import { createMigratedDatabase } from './template-database.js';
import type { Logger } from '../config/logger.js';

/** One request a responder received: its payload and who called. */
export interface ReceivedCall {
  subject: string;
  payload: unknown;
  appId?: string;
  playerId?: string;
}

/** The message id and the app header of a published message. */
export interface PublishOptions {
  id?: string;
  appId?: string;
}

/** A published message: its id, and whether the stream dropped it as a duplicate. */
export interface Published {
  id: string;
  duplicate: boolean;
}

/** One service under test, the bus to call it, and what its stand-in neighbours were asked. */
export interface ServiceTier<C extends BaseConfig> {
  /** The running service (a new one after `startService`). */
  service: RunningService<C>;
  config: C;
  /** Calls the service as the gateway or another service would. */
  bus: Bus;
  nc: NatsConnection;
  /** Every request the responders answered, in order. */
  calls: ReceivedCall[];
  /**
   * Publishes a durable message on the stream, as another service's outbox relay would
   * (Nats-Msg-Id = `opts.id`, default a fresh one), validated by the event's schema; answers the id
   * and whether the stream dropped it as a duplicate of that id.
   */
  publish<P extends z.ZodType>(event: EventContract<P>, payload: z.infer<P>, opts?: PublishOptions): Promise<Published>;
  /** As `publish`, then waits until the service applied the message (fails the test after `timeoutMs`). */
  publishApplied<P extends z.ZodType>(event: EventContract<P>, payload: z.infer<P>, opts?: PublishOptions & { timeoutMs?: number }): Promise<string>;
  /** Stops the service (drained, as on SIGTERM); the bus, stream and database stay. */
  stopService(): Promise<void>;
  /** Starts the service again over the same database and prefix, as a restart does. */
  startService(): Promise<RunningService<C>>;
  close(): Promise<void>;
}

/**
 * The service tier (docs/guide.md, "Tests"): ONE service against real Postgres and NATS (its own
 * database, NATS prefix and Redis prefix), with the services it calls answered by `responders`,
 * small handlers bound to the same contracts (validated both ways, typed errors on the wire, as
 * the runtime does). A service's suite then boots one service, and a contract change fails where
 * the contract is used.
 */
export async function startServiceTier<C extends BaseConfig>(
  def: ServiceDefinition<C>,
  parse: (env: Record<string, unknown>) => C,
  opts: { responders?: Endpoint[]; env?: Record<string, string>; logger?: Logger } = {},
): Promise<ServiceTier<C>> {
  const infra = await testInfra();
  const db = await createMigratedDatabase(infra, [def]);
  // The copy of the template is migrated already: starting skips the migrations' checks.
  const config = parse(isolatedConfig(infra, db.url, { MIGRATE_ON_START: 'off', ...opts.env }));
  const nc = await connect({ servers: infra.natsUrl });
  const calls: ReceivedCall[] = [];
  for (const ep of opts.responders ?? []) serveStandIn(nc, config.NATS_PREFIX, ep, calls);
  let running: RunningService<C> | undefined = await startService(def, config, opts.logger);
  // The caller waits longer than the service waits for its neighbours, so a neighbour that does
  // not answer shows as the service's own answer to that, not as the caller's timeout.
  const bus = new Bus(nc, config.NATS_PREFIX, config.NATS_REQUEST_TIMEOUT_MS + 5000);
  const tier: ServiceTier<C> = {
    service: running,
    config,
    bus,
    nc,
    calls,
    publish: (event, payload, o) => publishDurable(nc, config.NATS_PREFIX, event, payload, o),
    async publishApplied(event, payload, o = {}) {
      const id = o.id ?? randomUUID();
      const watch = watchApplied(nc, config.NATS_PREFIX, [id]);
      await publishDurable(nc, config.NATS_PREFIX, event, payload, { ...o, id });
      const seen = await watch.done(o.timeoutMs ?? 10_000);
      if (!seen.has(id)) throw new Error(`${config.NATS_PREFIX}: message ${id} on ${event.subject} was not applied in time`);
      return id;
    },
    async stopService() {
      await running?.stop();
      running = undefined;
    },
    async startService() {
      running = await startService(def, config, opts.logger);
      tier.service = running;
      return running;
    },
    async close() {
      await running?.stop();
      await nc.close();
      await deleteTestStreams(infra.natsUrl, config.NATS_PREFIX);
      await deleteRedisKeys(infra.redisUrl, config.REDIS_PREFIX);
      await db.drop();
    },
  };
  return tier;
}

/** Publishes one durable message as an outbox relay would. */
async function publishDurable<P extends z.ZodType>(
  nc: NatsConnection,
  prefix: string,
  event: EventContract<P>,
  payload: z.infer<P>,
  opts: PublishOptions = {},
): Promise<Published> {
  const id = opts.id ?? randomUUID();
  const h = natsHeaders();
  h.set('ccs-request-id', randomUUID());
  if (opts.appId) h.set('ccs-app-id', opts.appId);
  const ack = await nc.jetstream().publish(prefixed(prefix, event.subject), encodeJson(event.payload.parse(payload)), { msgID: id, headers: h });
  return { id, duplicate: ack.duplicate };
}

/**
 * Answers one contract's subject like a real service's endpoint would: the request is parsed by
 * the contract (400 invalid_message otherwise), the stand-in's reply too (a reply the contract
 * refuses answers the caller with a 500, so a stand-in cannot drift from the contract unseen).
 */
export function serveStandIn(nc: NatsConnection, prefix: string, ep: Endpoint<SubjectContract>, calls: ReceivedCall[] = []): void {
  nc.subscribe(prefixed(prefix, ep.contract.subject), {
    callback: (_err, msg) => {
      const ctx = contextFromHeaders(msg.headers);
      void (async () => {
        try {
          const req = ep.contract.request.safeParse(decodeJson(msg.data));
          if (!req.success) throw AppError.badRequest('invalid_message', `message on ${ep.contract.subject} failed validation`);
          calls.push({ subject: ep.contract.subject, payload: req.data, appId: ctx.appId, playerId: ctx.playerId });
          const reply = ep.contract.reply.parse(await ep.handle(req.data, ctx));
          msg.respond(encodeJson(reply));
        } catch (e) {
          const appErr = toAppError(e);
          // As the Service API's respondError (addEndpoint): its code in the error header, the errors as the body.
          const h = natsHeaders();
          h.set('Nats-Service-Error', appErr.code);
          h.set(ERROR_HEADER, String(serviceErrorCode(isPermanentFailure(appErr))));
          msg.respond(encodeJson({ errors: appErr.errors }), { headers: h });
        }
      })();
    },
  });
}
