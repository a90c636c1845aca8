import { connect, type NatsConnection } from 'nats';
import type { BaseConfig } from '../config/config.js';
import type { Logger } from '../config/logger.js';
import { ensureGrantsStream, GrantsJanitor } from '../messaging/stream.js';
import { describeInfraError, InfraError } from './infra-errors.js';
import { natsAuthOptions } from './nats-auth.js';

/** A running grants keeper; `stop` lets a sweep in progress finish and closes the connection. */
export interface RunningGrantsKeeper {
  nc: NatsConnection;
  stop(): Promise<void>;
}

/**
 * The grants stream's keeper, as the `streams` NATS user (`npm run admin -- keep-grants`): creates
 * the stream or raises it to JETSTREAM_REPLICAS, then purges every `intervalMs` what every
 * consumer acknowledged more than GRANTS_KEEP_ACKED_HOURS ago. With per-process NATS users it is
 * the one process allowed to change or purge the stream; the services may not (deploy/nats).
 * `once`: ensure, sweep once, stop.
 */
export async function startGrantsKeeper(
  config: BaseConfig,
  log: Logger,
  opts: { once?: boolean; intervalMs?: number } = {},
): Promise<RunningGrantsKeeper & { swept?: number }> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      ...natsAuthOptions(config),
      servers: config.NATS_URL,
      name: `${config.NATS_PREFIX}grants-keeper`,
      maxReconnectAttempts: -1,
    });
  } catch (err) {
    throw new InfraError(describeInfraError('NATS', config.NATS_URL, err));
  }
  const jsm = await nc.jetstreamManager().catch(async (err) => {
    await nc.close();
    throw new InfraError(`NATS at ${config.NATS_URL} has no JetStream (${String(err)}): start nats-server with -js.`);
  });
  await ensureGrantsStream(jsm, config.NATS_PREFIX, config.JETSTREAM_REPLICAS, { update: true });
  const janitor = new GrantsJanitor(jsm, config.NATS_PREFIX, config.GRANTS_KEEP_ACKED_HOURS * 3_600_000, log, opts.intervalMs);
  if (opts.once) {
    const swept = await janitor.sweep();
    await nc.close();
    return { nc, swept, stop: async () => undefined };
  }
  janitor.start();
  log.info({ stream: `${config.NATS_PREFIX ? `${config.NATS_PREFIX}_` : ''}GRANTS` }, 'grants keeper started');
  return {
    nc,
    async stop() {
      await janitor.stop();
      await nc.drain().catch(() => undefined);
    },
  };
}
