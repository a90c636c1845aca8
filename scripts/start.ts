/**
 * `npm start`: checks Postgres, NATS (JetStream) and Redis, then runs the seven services as child
 * processes (players first: it seeds the demo app), waits for the gateway's /readyz and says
 * where the API is. Ctrl-C or SIGTERM stops every child gracefully; if one dies, the rest stop too.
 */
import { fileURLToPath } from 'node:url';
import { checkInfrastructure, type InfraUrls } from './start/check-infra.js';
import { checkConfiguration, checkPorts } from './start/preflight.js';
import { SERVICE_NAMES, startServiceProcess, type Exit, type ServiceName, type ServiceProcess } from './start/service-process.js';
import { NotReadyError, waitForGateway, waitForServiceHealth } from './start/wait-ready.js';
import { GatewayConfigSchema, requestLogLevel } from '../services/gateway/src/config.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const urls: InfraUrls = {
  databaseUrl: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  natsUrl: env.NATS_URL || 'nats://127.0.0.1:4222',
  redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
};
const port = Number(env.PORT || 3000);
/** Loopback unless told otherwise (HOST=0.0.0.0 opens the API to the network). */
const host = env.HOST || '127.0.0.1';
/** /metrics on its own port by default, never on the API's; METRICS_PORT=0 serves it on PORT. */
const metricsPort = env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? 9464 : Number(env.METRICS_PORT);
/** The address this script (and the ready line) reaches the gateway at. */
const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
/** What every service process gets besides the caller's environment. */
const stackEnv = (urlsNow: InfraUrls) => ({
  DATABASE_URL: urlsNow.databaseUrl,
  NATS_URL: urlsNow.natsUrl,
  REDIS_URL: urlsNow.redisUrl,
  // HEALTH_PORT is off: several processes cannot share one port, and /readyz covers them all here.
  HEALTH_PORT: '0',
  HOST: host,
  METRICS_PORT: String(metricsPort),
});
const startTimeoutMs = Number(env.START_TIMEOUT_MS || 120_000);
const color = Boolean(process.stdout.isTTY) && !env.NO_COLOR;
const STOP_GRACE_MS = 30_000;

const say = (line: string) => console.log(`${color ? '\u001b[1mstart      |\u001b[0m' : 'start      |'} ${line}`);
const describeExit = (e: Exit) => (e.signal ? `signal ${e.signal}` : `exit code ${e.code}`);
const cleanExit = (e: Exit) => e.code === 0 || e.signal === 'SIGTERM' || e.signal === 'SIGINT';

const running: ServiceProcess[] = [];
let stopping: Promise<never> | undefined;
let demoKeyLine: string | undefined;
let demoSecretLine: string | undefined;

/** Starts one service process; an exit nobody asked for stops the whole stack with code 1. */
function launch(name: ServiceName): void {
  const proc = startServiceProcess(name, {
    cwd: ROOT,
    env: { ...env, ...stackEnv(urls) },
    color,
    print: (line) => console.log(line),
    onLine:
      name === 'players'
        ? (line) => {
            if (/demo app secret key/i.test(line)) demoSecretLine = line;
            else if (/demo app/i.test(line) && /key/i.test(line)) demoKeyLine = line;
          }
        : undefined,
  });
  running.push(proc);
  void proc.exited.then((exit) => {
    if (stopping) return;
    say(`${name} stopped unexpectedly (${describeExit(exit)}); stopping the other services`);
    void shutdown(1);
  });
}

/** Sends SIGTERM to one process and waits (bounded) for it to exit; SIGKILL after the grace time. */
async function stopProcess(proc: ServiceProcess, deadline: number): Promise<Exit> {
  if (!proc.hasExited()) proc.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), Math.max(0, deadline - Date.now()))));
  const result = await Promise.race([proc.exited, late]);
  clearTimeout(timer);
  if (result !== 'late') return result;
  say(`${proc.name} did not stop within ${STOP_GRACE_MS / 1000} s; killing it`);
  proc.child.kill('SIGKILL');
  return proc.exited;
}

/** Stops the gateway first (no new requests), then the services, and exits. */
function shutdown(code: number): Promise<never> {
  stopping ??= (async () => {
    const deadline = Date.now() + STOP_GRACE_MS;
    let failed = code !== 0;
    const gateway = running.filter((p) => p.name === 'gateway');
    const services = running.filter((p) => p.name !== 'gateway');
    for (const group of [gateway, services]) {
      const exits = await Promise.all(group.map(async (p) => ({ p, exit: await stopProcess(p, deadline) })));
      for (const { p, exit } of exits) {
        if (!cleanExit(exit)) {
          failed = true;
          say(`${p.name} ended with ${describeExit(exit)}`);
        }
      }
    }
    say(failed ? 'stopped, with errors' : 'stopped');
    process.exit(failed ? 1 : 0);
  })();
  return stopping;
}

let firstSignalAt = 0;

function onSignal(signal: NodeJS.Signals): void {
  if (stopping) {
    // Ctrl-C reaches us twice at once (from the terminal and relayed by npm/tsx): only a second
    // press, a moment later, means the user does not want to wait for a graceful stop.
    if (Date.now() - firstSignalAt < 1500) return;
    say(`${signal} again; killing the services`);
    for (const p of running) if (!p.hasExited()) p.child.kill('SIGKILL');
    process.exit(1);
  }
  firstSignalAt = Date.now();
  say(`${signal} received; stopping the services`);
  void shutdown(0);
}

/** Where a key came from, said after it: its variable, or a note that this start created it. */
const CREATED_NOW = 'created just now: players prints it only at this first start, so keep it';

/** The demo app's API key as the summary shows it, when it is known. */
function demoKeyHint(): string {
  if (env.CHESTS_DEMO_API_KEY) return `${env.CHESTS_DEMO_API_KEY} (from CHESTS_DEMO_API_KEY)`;
  const printed = demoKeyLine?.match(/API key: (\S+)/)?.[1];
  if (printed) return `${printed} (${CREATED_NOW})`;
  if (demoKeyLine) return `in the players line above ("${demoKeyLine.trim()}")`;
  return 'printed by players when it created the demo app on the first start (set CHESTS_DEMO_API_KEY to choose it, or run npm run admin -- create-app --name "My Game")';
}

/** The demo app's secret key (the studio console's sign-in and the admin API's key), when it is known. */
function demoSecretHint(): string {
  if (env.CHESTS_DEMO_SECRET_KEY) return `${env.CHESTS_DEMO_SECRET_KEY} (from CHESTS_DEMO_SECRET_KEY)`;
  const printed = demoSecretLine?.match(/secret key \(studio console and admin API\): (\S+)/)?.[1];
  if (printed) return `${printed} (${CREATED_NOW})`;
  return 'printed by players on the first start (set CHESTS_DEMO_SECRET_KEY to choose it), or an app\'s from npm run admin -- create-app --name "My Game"';
}

/**
 * The last lines of the start-up, once every service answers: the URL, the demo app's keys (which
 * players prints only when it creates them, far above by now), the console and where metrics are.
 * One write, so no service's line lands inside it.
 */
function printSummary(url: string, startedAt: number): void {
  const lines = [
    `ready in ${Math.round((Date.now() - startedAt) / 1000)} s: the API is at ${url} (reference: ${url}/docs; probes: ${url}/readyz, ${url}/healthz)`,
    `  demo API key:     ${demoKeyHint()}`,
    `  demo secret key:  ${demoSecretHint()}`,
    `  studio console:   ${url}/console (sign in with the demo secret key)`,
    metricsPort ? `  metrics:          http://${reachable}:${metricsPort}/metrics (METRICS_PORT; not on the API port)` : undefined,
    host === '127.0.0.1'
      ? '  listening on 127.0.0.1 only: set HOST=0.0.0.0 to reach the API from other machines (docs/deploy.md)'
      : `  listening on ${host}: the API is reachable from the network`,
    requestLinesHidden()
      ? '  the log has no line per request here: they are at debug (LOG_REQUESTS=info shows them; docs/observability.md)'
      : undefined,
    '  Ctrl-C stops everything',
  ].filter((l): l is string => l !== undefined);
  console.log(lines.map((l) => (color ? `\u001b[1mstart      |\u001b[0m ${l}` : `start      | ${l}`)).join('\n'));
}

/** Whether the gateway's line per request is below its LOG_LEVEL (LOG_REQUESTS' rule, in its config). */
function requestLinesHidden(): boolean {
  const gateway = GatewayConfigSchema.pick({ LOG_LEVEL: true, LOG_REQUESTS: true, NODE_ENV: true }).parse(env);
  return requestLogLevel(gateway) === 'debug' && !['debug', 'trace'].includes(gateway.LOG_LEVEL);
}

async function main(): Promise<void> {
  // Everything that would stop a service later is checked before any starts: settings, ports.
  const serviceEnv = { ...env, ...stackEnv(urls) };
  const settings = checkConfiguration(serviceEnv);
  const ports = settings.length
    ? []
    : await checkPorts([
        { name: 'PORT', port },
        { name: 'METRICS_PORT', port: metricsPort },
      ]);
  if (settings.length || ports.length) {
    for (const line of [...settings, ...ports]) console.error(line);
    process.exit(1);
  }
  say(`checking Postgres, NATS and Redis (${urls.databaseUrl.replace(/\/\/[^@/]*@/, '//***@')}, ${urls.natsUrl}, ${urls.redisUrl})`);
  const problems = await checkInfrastructure(urls);
  if (problems.length) {
    for (const line of problems) console.error(line);
    process.exit(1);
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const aborted = () => stopping !== undefined;
  const startedAt = Date.now();
  try {
    say('starting players (migrates its schema, seeds the demo app on an empty database)');
    launch('players');
    await waitForServiceHealth({ natsUrl: urls.natsUrl, prefix: env.NATS_PREFIX ?? '', service: 'players', timeoutMs: startTimeoutMs, aborted });
    const rest = SERVICE_NAMES.filter((n) => n !== 'players');
    say(`players is up; starting ${rest.join(', ')}`);
    for (const name of rest) launch(name);
    const url = host === '127.0.0.1' ? `http://localhost:${port}` : `http://${reachable}:${port}`;
    await waitForGateway({ url: `http://${reachable}:${port}`, timeoutMs: startTimeoutMs, aborted, progress: say });
    // The gateway's /readyz does not wait for egress and store: wait for them too, so the summary comes last.
    for (const service of ['egress', 'store'])
      await waitForServiceHealth({ natsUrl: urls.natsUrl, prefix: env.NATS_PREFIX ?? '', service, timeoutMs: startTimeoutMs, aborted });
    printSummary(url, startedAt);
  } catch (err) {
    if (stopping) return;
    say(err instanceof NotReadyError ? `not ready: ${err.message}` : `could not start: ${String(err)}`);
    void shutdown(1);
  }
}

void main();
