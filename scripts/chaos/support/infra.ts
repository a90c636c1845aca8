/**
 * The chaos run's own infrastructure: a private nats-server (JetStream, its own store, a free
 * port) and a private Postgres cluster (initdb, a free port), both of which the run may kill and
 * restart, and a key prefix on the machine's Redis. The machine's own Postgres and NATS are never
 * stopped or restarted.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { connect } from 'nats';
import pg from 'pg';
import { freePort, privatePostgresUnavailable, startPrivatePostgres, type PrivatePostgres } from '@ccs/shared/testing';

export { deleteRedisKeys, freePort } from '@ccs/shared/testing';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A problem the operator can fix: the message says what to do next. */
export class SetupError extends Error {
  override name = 'SetupError';
}

/** A nats-server of this run only: `kill` crashes it, `start` brings it back on the same port and store. */
export interface PrivateNats {
  readonly url: string;
  readonly port: number;
  start(): Promise<void>;
  /** Kills the server (SIGKILL by default: a crash) and waits for its exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  log(): string;
  destroy(): Promise<void>;
}

/** Why no private nats-server can run here, or undefined when one can. */
export function natsServerUnavailable(): string | undefined {
  try {
    natsBinary();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

function natsBinary(): string {
  const wanted = process.env.CHAOS_NATS_SERVER;
  if (wanted && !existsSync(wanted))
    throw new SetupError(
      `CHAOS_NATS_SERVER names ${wanted}, which does not exist: point it at the nats-server binary, or unset it to look in the usual places`,
    );
  const candidates = [process.env.CHAOS_NATS_SERVER, '/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];
  const which = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) candidates.push(which.stdout.trim());
  const found = candidates.find((c): c is string => !!c && existsSync(c));
  if (!found) {
    throw new SetupError(
      'no nats-server binary found (looked at CHAOS_NATS_SERVER, /usr/sbin, /usr/bin, /usr/local/bin and PATH): install it (apt-get install nats-server, or a release from github.com/nats-io/nats-server) or set CHAOS_NATS_SERVER to its path',
    );
  }
  return found;
}

/** Resolves once the server accepts a client and JetStream answers. */
async function waitForJetStream(url: string, timeoutMs: number, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline && !exited()) {
    try {
      const nc = await connect({ servers: url, reconnect: false, timeout: 1000 });
      try {
        const jsm = await nc.jetstreamManager({ timeout: 1000 });
        await jsm.getAccountInfo();
        return;
      } finally {
        await nc.close();
      }
    } catch (err) {
      last = String(err);
    }
    await sleep(50);
  }
  throw new SetupError(`the private nats-server at ${url} ${exited() ? 'exited' : 'did not answer'} (${last})`);
}

export async function startPrivateNats(): Promise<PrivateNats> {
  const bin = natsBinary();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ccs-chaos-nats-'));
  const url = `nats://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let tail = '';
  let destroyed = false;
  const onExit = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  const nats: PrivateNats = {
    url,
    port,
    async start() {
      const c = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'store')], { stdio: ['ignore', 'pipe', 'pipe'] });
      child = c;
      let gone = false;
      c.once('exit', () => (gone = true));
      const keep = (d: Buffer) => void (tail = (tail + d.toString()).slice(-6000));
      c.stdout!.on('data', keep);
      c.stderr!.on('data', keep);
      await waitForJetStream(url, 20_000, () => gone);
    },
    async kill(signal = 'SIGKILL') {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill(signal);
      await exited;
    },
    log: () => tail,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      process.removeListener('exit', onExit);
      await nats.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await nats.start();
  } catch (err) {
    await nats.destroy();
    throw err;
  }
  return nats;
}

/** A private Postgres cluster with one database for the stack, `chaos`. */
export async function startChaosPostgres(): Promise<{ cluster: PrivatePostgres; databaseUrl: string }> {
  const reason = privatePostgresUnavailable();
  if (reason)
    throw new SetupError(
      `cannot start a private Postgres cluster: ${reason}. Install the Postgres server binaries (apt-get install postgresql) or set PG_BINDIR to the folder holding initdb and pg_ctl`,
    );
  const cluster = await startPrivatePostgres({ settings: { max_connections: '200' } });
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query('CREATE DATABASE chaos');
  await admin.end();
  const u = new URL(cluster.url);
  u.pathname = '/chaos';
  return { cluster, databaseUrl: u.toString() };
}

/** Checks the machine's Redis answers (the stack keeps its rate limits and caches there). */
export async function checkRedis(url: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true, connectTimeout: 2000, retryStrategy: () => null });
  redis.on('error', () => undefined); // the failed connect below says it
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    throw new SetupError(`cannot reach Redis at ${url} (${String(err)}): start it (redis-server --daemonize yes) or set REDIS_URL`);
  } finally {
    redis.disconnect();
  }
}
