import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { connect, type NatsConnection } from 'nats';
import {
  AdminCreateApp,
  AdminLoadContent,
  AppError,
  BaseConfigSchema,
  Bus,
  describeInfraError,
  loadConfig,
  readContentFile,
} from '@ccs/shared';

const USAGE = `Usage:
  npm run admin -- create-app --name "My Game" [--content content.json]
  npm run admin -- load-content --app <app id> --file content.json
Talks to the running players service over NATS (NATS_URL, NATS_PREFIX).`;

class UsageError extends Error {}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`missing --${flag}`);
  return value;
}

/** Runs one admin command against the players service and prints its result. */
async function run(bus: Bus, argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, content: { type: 'string' }, app: { type: 'string' }, file: { type: 'string' } },
  });
  const ctx = { requestId: randomUUID() };
  if (command === 'create-app') {
    const name = required(values.name, 'name');
    const content = values.content ? readContentFile(values.content) : undefined;
    const app = await bus.request(AdminCreateApp, { name, content }, ctx);
    console.log(
      [
        `App "${name}" created (content version ${app.contentVersion}${values.content ? ` from ${values.content}` : ', default content'}).`,
        `  app id:          ${app.appId}`,
        `  publishable key: ${app.publishableKey}   (game clients send it in the apikey header)`,
        `  secret key:      ${app.secretKey}   (servers only; shown once, store it now)`,
      ].join('\n'),
    );
    return;
  }
  if (command === 'load-content') {
    const appId = required(values.app, 'app');
    const file = required(values.file, 'file');
    const { version } = await bus.request(AdminLoadContent, { appId, content: readContentFile(file) }, ctx);
    console.log(`Content of ${file} loaded into app ${appId} as version ${version}; every service applies it shortly.`);
    return;
  }
  throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
}

/** The admin command line: `npm run admin -- <command> ...`. Exit 0 on success, 1 on failure, 2 on bad usage. */
async function main(): Promise<number> {
  let config;
  try {
    config = loadConfig(BaseConfigSchema);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  }
  let nc: NatsConnection;
  try {
    nc = await connect({ servers: config.NATS_URL, maxReconnectAttempts: 0, timeout: 3000 });
  } catch (err) {
    console.error(describeInfraError('NATS', config.NATS_URL, err));
    return 1;
  }
  try {
    await run(new Bus(nc, config.NATS_PREFIX, 15_000), process.argv.slice(2));
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n${USAGE}`);
      return 2;
    }
    if (err instanceof AppError && (err.status === 503 || err.status === 504)) {
      console.error('No players service answered: start the stack with `npm start`.');
      return 1;
    }
    if (err instanceof AppError) console.error(err.errors.map((e) => `${e.title}: ${e.detail ?? e.code}`).join('\n'));
    else console.error(err instanceof Error ? err.message : String(err));
    return 1;
  } finally {
    await nc.close();
  }
}

process.exitCode = await main();
