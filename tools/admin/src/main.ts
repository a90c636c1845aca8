/**
 * The admin command line: `npm run admin -- <command> ...` (see admin/cli.ts for the commands).
 * Connects to NATS (NATS_URL, NATS_PREFIX) and talks to the running services; results go to
 * stdout, progress and errors to stderr. Exit 0 on success, 1 on failure, 2 on bad usage.
 */
import { connect, type NatsConnection } from 'nats';
import { BaseConfigSchema, Bus, createLogger, loadConfig, natsAuthOptions, startGrantsKeeper, type BaseConfig } from '@ccs/shared';
import { runAdmin } from './cli.js';

async function main(): Promise<number> {
  let config;
  try {
    config = loadConfig(BaseConfigSchema);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  }
  if (process.argv[2] === 'keep-grants') return keepGrants(config, process.argv.slice(3));
  let auth;
  try {
    auth = natsAuthOptions(config); // the admin user's credentials (NATS_USER, NATS_CREDS, …), if any
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  }
  let nc: NatsConnection;
  try {
    nc = await connect({ ...auth, servers: config.NATS_URL, maxReconnectAttempts: 0, timeout: 3000, name: 'admin-cli' });
  } catch (err) {
    const reason = (err as { code?: string }).code ?? (err instanceof Error ? err.message : String(err));
    console.error(`Cannot reach NATS at ${config.NATS_URL} (${reason}): start the stack with \`npm start\`, or set NATS_URL to where it runs.`);
    return 1;
  }
  try {
    return await runAdmin(process.argv.slice(2), {
      bus: new Bus(nc, config.NATS_PREFIX, 15_000),
      io: { out: (line) => console.log(line), progress: (line) => console.error(line) },
      maxPayload: nc.info?.max_payload ?? 1024 * 1024,
    });
  } finally {
    await nc.close();
  }
}

/**
 * `keep-grants [--once]`: the grants stream's keeper (the `streams` NATS user): ensures the stream,
 * then purges what every consumer acknowledged, every 10 minutes until SIGTERM (or once).
 */
async function keepGrants(config: BaseConfig, args: string[]): Promise<number> {
  const once = args.includes('--once');
  if (args.some((a) => a !== '--once')) {
    console.error('Usage: npm run admin -- keep-grants [--once]');
    return 2;
  }
  const log = createLogger('grants-keeper', config.LOG_LEVEL);
  let keeper;
  try {
    keeper = await startGrantsKeeper(config, log, { once });
  } catch (err) {
    console.error(`[grants-keeper] ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  if (once) {
    console.log(`grants stream: ${keeper.swept ?? 0} acknowledged message(s) purged`);
    return 0;
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  log.info({ signal }, 'grants keeper stopping');
  await keeper.stop();
  return 0;
}

process.exitCode = await main();
