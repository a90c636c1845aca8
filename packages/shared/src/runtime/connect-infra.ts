import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import type pg from 'pg';
import type { BaseConfig } from '../config/config.js';
import type { Logger } from '../config/logger.js';
import { createPool } from '../db/pool.js';
import { usePreparedStatements } from '../db/prepared.js';
import { currentSearchPath } from '../db/probes.js';
import { whileJetStreamSettles } from '../messaging/jetstream-settle.js';
import { ensureGrantsStream } from '../messaging/stream.js';
import { describeInfraError, InfraError } from './infra-errors.js';
import { NATS_LIVENESS, natsAuthOptions } from './nats-auth.js';

/**
 * The service's pool, once Postgres answered, its statements named or not by PG_PREPARED_STATEMENTS
 * (process-wide). With PG_SEARCH_PATH=role the role's search_path
 * must put the service's schema first. On failure the pool is closed and an InfraError says why.
 */
export async function openDatabase(schema: string, config: BaseConfig): Promise<pg.Pool> {
  usePreparedStatements(config.PG_PREPARED_STATEMENTS === 'on');
  const pool = createPool(config.DATABASE_URL, schema, config.PG_POOL_MAX, config.PG_SEARCH_PATH);
  let searchPath: string;
  try {
    searchPath = await currentSearchPath(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new InfraError(describeInfraError('Postgres', config.DATABASE_URL, err));
  }
  const first = searchPath
    .split(',')[0]!
    .trim()
    .replace(/^"(.*)"$/, '$1');
  if (config.PG_SEARCH_PATH === 'role' && first !== schema) {
    await pool.end().catch(() => undefined);
    throw new InfraError(
      `PG_SEARCH_PATH=role, but the role in DATABASE_URL has search_path "${searchPath}", not "${schema}" first: ` +
        `run ALTER ROLE <role> SET search_path = ${schema}, or unset PG_SEARCH_PATH.`,
    );
  }
  return pool;
}

/** A NATS connection and whether it authenticates as a user of its own (deploy/nats). */
export interface NatsLink {
  nc: NatsConnection;
  ownStreamUser: boolean;
}

/** Connects to NATS with the configured credentials; on failure closes `pool` and throws. */
export async function connectNats(name: string, config: BaseConfig, pool: pg.Pool): Promise<NatsLink> {
  let auth: ReturnType<typeof natsAuthOptions>;
  try {
    auth = natsAuthOptions(config); // NATS_USER, NATS_CREDS, NATS_TLS_*…: {} when none is set
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  try {
    // noAsyncTraces: no Error object (and stack capture) per request; our errors carry the subject.
    const nc = await connect({
      ...auth,
      servers: config.NATS_URL,
      name: `${config.NATS_PREFIX}${name}`,
      maxReconnectAttempts: -1,
      noAsyncTraces: true,
      ...NATS_LIVENESS,
    });
    return { nc, ownStreamUser: Boolean(auth.user || auth.token || auth.authenticator) };
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new InfraError(describeInfraError('NATS', config.NATS_URL, err));
  }
}

/** JetStream's manager, with the grants stream created (or, without NATS users, brought in line). */
export async function prepareJetStream(link: NatsLink, config: BaseConfig, log: Logger): Promise<JetStreamManager> {
  const settle = { nc: link.nc, log };
  const jsm = await whileJetStreamSettles('JetStream account', () => link.nc.jetstreamManager(), settle).catch((err) => {
    throw new InfraError(`NATS at ${config.NATS_URL} has no JetStream (${String(err)}): start nats-server with -js.`);
  });
  // With NATS users each service may only create the grants stream (deploy/nats): changing it and
  // purging it are the grants keeper's (`npm run admin -- keep-grants`, the `streams` user).
  const inLine = await whileJetStreamSettles(
    'the grants stream',
    () => ensureGrantsStream(jsm, config.NATS_PREFIX, config.JETSTREAM_REPLICAS, { update: !link.ownStreamUser }),
    settle,
  );
  if (!inLine) {
    log.warn(
      { replicas: config.JETSTREAM_REPLICAS },
      'the grants stream differs from JETSTREAM_REPLICAS (or has an age limit): the grants keeper (npm run admin -- keep-grants) brings it in line',
    );
  }
  return jsm;
}
