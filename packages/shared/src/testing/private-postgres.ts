import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, appendFileSync } from 'node:fs';
import { freePort } from './infra.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway Postgres cluster of this machine's own binaries (initdb, pg_ctl) in a temporary
 * directory, on a free local port: a database a test or a chaos script may stop, crash and
 * restart (`pg_ctl restart -m immediate`) without touching the shared one. `destroy` stops it
 * and deletes the directory; a process that exits without calling it still stops the cluster.
 *
 * Postgres refuses to run as root: as root, every command runs as the `postgres` user (or
 * PRIVATE_PG_USER) through runuser or su. PG_BINDIR names the binaries' folder when they are
 * not in the usual places.
 */
export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication). */
  readonly url: string;
  readonly port: number;
  /** The temporary directory: data/, the server log, the Unix socket. */
  readonly dir: string;
  start(): Promise<void>;
  /** `pg_ctl stop -m <mode>`; `immediate` is a crash (no checkpoint; recovery on the next start). */
  stop(mode?: 'smart' | 'fast' | 'immediate'): Promise<void>;
  /** `pg_ctl restart -m <mode>`; resolves once the server accepts connections again. */
  restart(mode?: 'smart' | 'fast' | 'immediate'): Promise<void>;
  isRunning(): Promise<boolean>;
  /** The server's log: its last `tailChars` characters (4000 by default, for failure messages), or all of it with `Infinity`. */
  log(tailChars?: number): string;
  /** Stops the cluster (immediately) and deletes its directory. Calling it again does nothing. */
  destroy(): Promise<void>;
}

/** Settings of the throwaway cluster; fsync off is safe here (a crash of the server, not of the machine). */
const SETTINGS: Record<string, string> = {
  listen_addresses: "'127.0.0.1'",
  fsync: 'off',
  full_page_writes: 'off',
  shared_buffers: "'32MB'",
  max_connections: '100',
  logging_collector: 'off',
};

/** The folder holding initdb, pg_ctl and postgres, or undefined when this machine has none. */
export function findPostgresBinDir(): string | undefined {
  const has = (d: string) => ['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(join(d, b)));
  const candidates: string[] = [];
  if (process.env.PG_BINDIR) candidates.push(process.env.PG_BINDIR);
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+(\.\d+)?$/.test(v));
    versions.sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(debian, v, 'bin')));
  }
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (pgConfig.status === 0 && pgConfig.stdout.trim()) candidates.push(pgConfig.stdout.trim());
  candidates.push('/usr/local/pgsql/bin', '/usr/local/bin', '/opt/homebrew/bin', '/usr/bin');
  return candidates.find(has);
}

interface RunAs {
  /** The command line that runs `bin args…` as the cluster's owner. */
  wrap(bin: string, args: string[]): [string, string[]];
  uid?: number;
  gid?: number;
}

function runAs(): RunAs | string {
  if (process.getuid?.() !== 0) return { wrap: (bin, args) => [bin, args] };
  const user = process.env.PRIVATE_PG_USER ?? 'postgres';
  const ids = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  const gids = spawnSync('id', ['-g', user], { encoding: 'utf8' });
  if (ids.status !== 0 || gids.status !== 0) return `running as root and there is no "${user}" user to run Postgres as (set PRIVATE_PG_USER)`;
  const uid = Number(ids.stdout.trim());
  const gid = Number(gids.stdout.trim());
  const runuser = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find(existsSync);
  if (runuser) return { uid, gid, wrap: (bin, args) => [runuser, ['-u', user, '--', bin, ...args]] };
  const su = ['/usr/bin/su', '/bin/su'].find(existsSync);
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  if (su) return { uid, gid, wrap: (bin, args) => [su, [user, '-s', '/bin/sh', '-c', [bin, ...args].map(quote).join(' ')]] };
  return 'running as root, and neither runuser nor su is there to run Postgres as another user';
}

/** Why a private cluster cannot run on this machine, or undefined when it can. */
export function privatePostgresUnavailable(): string | undefined {
  if (process.platform === 'win32') return 'private Postgres clusters are not supported on Windows';
  if (!findPostgresBinDir())
    return 'no initdb/pg_ctl/postgres found (looked in PG_BINDIR, /usr/lib/postgresql/*/bin, pg_config --bindir, /usr/local, /usr/bin)';
  const as = runAs();
  return typeof as === 'string' ? as : undefined;
}

function run(as: RunAs, bin: string, args: string[], timeoutMs: number): Promise<string> {
  const [file, argv] = as.wrap(bin, args);
  return new Promise((resolve, reject) => {
    execFile(file, argv, { timeout: timeoutMs, encoding: 'utf8', cwd: tmpdir() }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Where a private cluster lives and how its commands run. */
interface ClusterPlace {
  as: RunAs;
  pgCtl: string;
  dir: string;
  data: string;
  logFile: string;
  timeoutMs: number;
}

/** The cluster's controls over pg_ctl; the process's exit stops it unless destroy() did. */
function clusterControls({ as, pgCtl, dir, data, logFile, timeoutMs }: ClusterPlace): PrivatePostgres {
  const seconds = String(Math.ceil(timeoutMs / 1000));
  let destroyed = false;
  // A test process that dies without destroy() must not leave a server running.
  const onExit = () => {
    const [file, argv] = as.wrap(pgCtl, ['-D', data, '-m', 'immediate', '-w', '-t', '10', 'stop']);
    spawnSync(file, argv, { stdio: 'ignore', timeout: 15_000 });
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  return {
    url: '',
    port: 0,
    dir,
    start: () => run(as, pgCtl, ['-D', data, '-l', logFile, '-w', '-t', seconds, 'start'], timeoutMs + 5000).then(() => undefined),
    stop: (mode = 'fast') => run(as, pgCtl, ['-D', data, '-m', mode, '-w', '-t', seconds, 'stop'], timeoutMs + 5000).then(() => undefined),
    restart: (mode = 'fast') =>
      run(as, pgCtl, ['-D', data, '-l', logFile, '-m', mode, '-w', '-t', seconds, 'restart'], timeoutMs + 5000).then(() => undefined),
    isRunning: () =>
      run(as, pgCtl, ['-D', data, 'status'], 10_000).then(
        () => true,
        () => false,
      ),
    log: (tailChars = 4000) => {
      try {
        const text = readFileSync(logFile, 'utf8');
        return Number.isFinite(tailChars) ? text.slice(-tailChars) : text;
      } catch {
        return '';
      }
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      process.removeListener('exit', onExit);
      await run(as, pgCtl, ['-D', data, '-m', 'immediate', '-w', '-t', '10', 'stop'], 15_000).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** initdb, then this cluster's settings (a free port, the socket in its directory) in postgresql.conf; returns the port. */
async function initialise(bin: string, { as, dir, data, timeoutMs }: ClusterPlace, extra: Record<string, string> | undefined): Promise<number> {
  await run(as, join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], timeoutMs);
  const port = await freePort();
  const settings = { ...SETTINGS, port: String(port), unix_socket_directories: `'${dir}'`, ...extra };
  appendFileSync(
    join(data, 'postgresql.conf'),
    `\n# private test cluster\n${Object.entries(settings)
      .map(([k, v]) => `${k} = ${v}`)
      .join('\n')}\n`,
  );
  return port;
}

/** Creates (initdb) and starts a private cluster; throws with the reason when the machine cannot. */
export async function startPrivatePostgres(opts: { settings?: Record<string, string>; timeoutMs?: number } = {}): Promise<PrivatePostgres> {
  const reason = privatePostgresUnavailable();
  if (reason) throw new Error(`cannot start a private Postgres: ${reason}`);
  const bin = findPostgresBinDir()!;
  const as = runAs() as RunAs;
  const dir = mkdtempSync(join(tmpdir(), 'ccs-pg-'));
  if (as.uid !== undefined) chownSync(dir, as.uid, as.gid!);
  const place: ClusterPlace = {
    as,
    pgCtl: join(bin, 'pg_ctl'),
    dir,
    data: join(dir, 'data'),
    logFile: join(dir, 'postgres.log'),
    timeoutMs: opts.timeoutMs ?? 60_000,
  };
  const cluster = clusterControls(place);
  try {
    const port = await initialise(bin, place, opts.settings);
    await cluster.start();
    return Object.assign(cluster, { port, url: `postgres://postgres@127.0.0.1:${port}/postgres` });
  } catch (err) {
    const log = cluster.log();
    await cluster.destroy();
    throw new Error(`${(err as Error).message}${log ? `\nserver log:\n${log}` : ''}`, { cause: err });
  }
}
