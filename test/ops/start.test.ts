import { createServer } from 'node:net';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, deleteTestStreams, freePort, testInfra } from '@ccs/shared/testing';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The service processes a launcher started (its other children, like tsx's esbuild, aside). */
function childProcesses(pid: number): { pid: number; args: string }[] {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => ({ pid: Number(l.split(/\s+/, 1)[0]), args: l.replace(/^\d+\s+/, '') }))
    .filter((c) => /services\/\w+\/src\/main\.ts/.test(c.args));
}

/** Whether a process still exists. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `npm start` as a child process, with everything it prints collected. */
function launch(env: Record<string, string>): { child: ChildProcess; output: () => string; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=development', 'scripts/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out + err, stderr: () => err, exit };
}

/**
 * Resolves when `check` holds; fails with what the process printed once it has printed nothing
 * new for `stallMs` (a launch stuck, not a slow machine: every step of a start prints a line).
 */
async function waitFor(check: () => boolean, output: () => string, stallMs = 60_000): Promise<void> {
  let seen = output().length;
  let progressAt = Date.now();
  while (!check()) {
    const now = output().length;
    if (now !== seen) [seen, progressAt] = [now, Date.now()];
    else if (Date.now() - progressAt > stallMs) throw new Error(`no progress for ${stallMs / 1000} s; output so far:\n${output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Bounds a promise in time: a guard against a process that never exits, far above a loaded machine's pace. */
function within<T>(ms: number, p: Promise<T>): Promise<T | 'timeout'> {
  return Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms))]);
}

describe('npm start (scripts/start.ts)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });

  /** A throwaway database, NATS prefix, Redis prefix and port for one launch; cleaned up after. */
  async function isolatedEnv(opts: { demoKey?: boolean } = {}): Promise<Record<string, string>> {
    const infra = await testInfra();
    const db = await createTestDatabase(infra);
    cleanups.push(db.drop);
    const id = randomBytes(4).toString('hex');
    const env: Record<string, string> = {
      DATABASE_URL: db.url,
      NATS_URL: infra.natsUrl,
      REDIS_URL: infra.redisUrl,
      NATS_PREFIX: `tstart${id}`,
      REDIS_PREFIX: `tstart${id}:`,
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      CHESTS_DEMO_API_KEY: `demo_${id}${randomBytes(12).toString('hex')}`,
      LOG_LEVEL: 'info',
      ARGON2_MEMORY_KIB: '1024',
      ARGON2_TIME_COST: '1',
      PG_POOL_MAX: '3',
      // npm start's own bound on a start (120 s by default) is not what these tests check.
      START_TIMEOUT_MS: '600000',
    };
    if (opts.demoKey === false) delete env.CHESTS_DEMO_API_KEY;
    cleanups.push(() => deleteTestStreams(infra.natsUrl, env.NATS_PREFIX!));
    cleanups.push(async () => {
      const redis = new Redis(infra.redisUrl);
      const keys = await redis.keys(`${env.REDIS_PREFIX}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });
    return env;
  }

  /** Launches the stack and waits for the end of its summary. */
  async function launchReady(env: Record<string, string>) {
    const run = launch(env);
    cleanups.push(async () => {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    });
    await waitFor(() => /\| {3}Ctrl-C stops everything\n/.test(run.output()) || run.child.exitCode !== null, run.output);
    return run;
  }

  /** The start-up summary: the lines from `ready in` to `Ctrl-C stops everything`. */
  function summaryOf(output: string): string {
    const match = /^start +\| ready in \d+ s: [\s\S]*?Ctrl-C stops everything$/m.exec(output);
    if (!match) throw new Error(`no start-up summary in:\n${output.slice(-4000)}`);
    return match[0];
  }

  it('starts all seven services, ends with the URL and the keys it created, answers /readyz and /healthz, and stops cleanly on SIGTERM', async () => {
    const env = await isolatedEnv({ demoKey: false });
    const port = env.PORT!;
    const run = await launchReady(env);
    const output = run.output();
    // players prints the demo app's keys once, as it creates them, long before the stack is ready.
    const apiKey = /demo app created; API key: (\S+)/.exec(output)?.[1];
    const secretKey = /demo app secret key \(studio console and admin API\): (\S+)/.exec(output)?.[1];
    expect(apiKey, output).toMatch(/^pk_/);
    expect(secretKey, output).toMatch(/^sk_/);
    // The summary repeats them with the URL, once every service has said it started.
    const summary = summaryOf(output);
    expect(summary).toContain(`the API is at http://localhost:${port} (reference: http://localhost:${port}/docs`);
    expect(summary).toMatch(new RegExp(`demo API key: +${apiKey} \\(created just now`));
    expect(summary).toMatch(new RegExp(`demo secret key: +${secretKey} \\(created just now`));
    expect(summary).toContain(`studio console:   http://localhost:${port}/console`);
    expect(summary).toContain(`metrics:          http://127.0.0.1:${env.METRICS_PORT}/metrics`);
    expect(summary).toContain('listening on 127.0.0.1 only');
    expect(summary).toContain('they are at debug (LOG_REQUESTS=info shows them');
    for (const started of [
      'players service started',
      'wallet service started',
      'chests service started',
      'collections service started',
      'egress service started',
      'store service started',
      'gateway listening',
    ]) {
      expect(output.indexOf(started), started).toBeGreaterThan(-1);
      expect(output.indexOf(started), started).toBeLessThan(output.indexOf(summary));
    }
    // players starts (and seeds) before the others are launched.
    expect(output.indexOf('players is up')).toBeGreaterThan(output.indexOf('starting players'));
    const labelled = (name: string) => new RegExp(`^${name} *\\| `, 'm').test(output);
    for (const name of ['players', 'wallet', 'chests', 'collections', 'egress', 'store', 'gateway']) expect(labelled(name), name).toBe(true);

    // Requests of the API (not only probes): no line each at the default level.
    for (let i = 0; i < 3; i++) expect((await fetch(`http://127.0.0.1:${port}/api/v1/chests`, { headers: { apikey: apiKey! } })).status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      checks: { players: true, wallet: true, chests: true, collections: true, redis: true },
    });
    const alive = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(alive.status).toBe(200);
    expect(await alive.json()).toEqual({ status: 'ok' });
    // Safe by default: /metrics only on METRICS_PORT, and nothing listens beyond loopback.
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${env.METRICS_PORT}/metrics`)).status).toBe(200);
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    if (external) {
      for (const p of [port, env.METRICS_PORT!]) await expect(fetch(`http://${external}:${p}/healthz`), `${external}:${p}`).rejects.toThrow();
    }

    const children = childProcesses(run.child.pid!);
    expect(children.map((c) => c.args.match(/services\/(\w+)\//)?.[1]).sort()).toEqual([
      'chests',
      'collections',
      'egress',
      'gateway',
      'players',
      'store',
      'wallet',
    ]);
    run.child.kill('SIGTERM');
    expect(await within(120_000, run.exit)).toBe(0);
    expect(run.output()).toMatch(/\| stopped\n/);
    // Everything the gateway wrote is out by now (its `gateway stopped` line comes last).
    expect(run.output()).toMatch(/^gateway +\| INFO +gateway stopped/m);
    expect(run.output()).not.toContain('request completed');
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    for (const c of children) expect(isAlive(c.pid), c.args).toBe(false);
  }, 400_000);

  it('names a demo key it was given, logs requests at info with LOG_REQUESTS=info, and stops the others when one service dies', async () => {
    const env: Record<string, string> = { ...(await isolatedEnv()), LOG_REQUESTS: 'info' };
    const run = await launchReady(env);
    const summary = summaryOf(run.output());
    expect(summary).toMatch(new RegExp(`demo API key: +${env.CHESTS_DEMO_API_KEY} \\(from CHESTS_DEMO_API_KEY\\)`));
    expect(summary).not.toContain('they are at debug');
    const chests = await fetch(`http://127.0.0.1:${env.PORT}/api/v1/chests`, { headers: { apikey: env.CHESTS_DEMO_API_KEY! } });
    expect(chests.status).toBe(200);
    await waitFor(() => /^gateway +\| INFO +request completed .*"route":"\/api\/v1\/chests"/m.test(run.output()), run.output);
    const children = childProcesses(run.child.pid!);
    const wallet = children.find((c) => c.args.includes('services/wallet/src/main.ts'));
    expect(wallet, JSON.stringify(children)).toBeDefined();
    process.kill(wallet!.pid, 'SIGKILL');
    expect(await within(120_000, run.exit)).toBe(1);
    expect(run.output()).toContain('wallet stopped unexpectedly (signal SIGKILL); stopping the other services');
    for (const c of children) expect(isAlive(c.pid), c.args).toBe(false);
  }, 400_000);

  it('prints one line for an unreachable Redis and exits 1 without starting anything', async () => {
    const infra = await testInfra();
    const run = launch({
      DATABASE_URL: infra.databaseUrl,
      NATS_URL: infra.natsUrl,
      REDIS_URL: 'redis://127.0.0.1:1',
      PORT: String(await freePort()),
    });
    expect(await within(120_000, run.exit)).toBe(1);
    const lines = run.stderr().trim().split('\n');
    expect(lines, run.output()).toHaveLength(1);
    expect(lines[0]).toMatch(/^Cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\): .*redis-server.*docker compose up -d redis/);
    expect(run.output()).not.toContain('starting players');
    expect(run.output()).not.toMatch(/\n\s+at /);
  }, 180_000);

  it('names each missing piece on its own line when several are down', async () => {
    const run = launch({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/postgres',
      NATS_URL: 'nats://127.0.0.1:1',
      REDIS_URL: 'redis://127.0.0.1:1',
      PORT: String(await freePort()),
    });
    expect(await within(120_000, run.exit)).toBe(1);
    const lines = run.stderr().trim().split('\n');
    expect(lines, run.output()).toHaveLength(3);
    expect(lines[0]).toMatch(/^Cannot reach Postgres .*docker compose up -d postgres/);
    expect(lines[1]).toMatch(/^Cannot reach NATS .*nats-server -js.*docker compose up -d nats/);
    expect(lines[2]).toMatch(/^Cannot reach Redis .*docker compose up -d redis/);
  }, 180_000);

  it('checks every setting and the port before starting anything: one line each, exit 1', async () => {
    const infra = await testInfra();
    const bad = launch({ DATABASE_URL: infra.databaseUrl, NATS_URL: infra.natsUrl, REDIS_URL: infra.redisUrl, PORT: 'abc' });
    expect(await within(120_000, bad.exit)).toBe(1);
    expect(bad.stderr().trim().split('\n'), bad.output()).toEqual([
      expect.stringMatching(/^Invalid setting PORT="abc": .*\(read by gateway\); fix it or unset it/),
    ]);
    expect(bad.output()).not.toContain('starting players');

    const taken = createServer().listen(0, '0.0.0.0');
    await new Promise((r) => taken.once('listening', r));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = launch({ DATABASE_URL: infra.databaseUrl, NATS_URL: infra.natsUrl, REDIS_URL: infra.redisUrl, PORT: String(port) });
      expect(await within(120_000, run.exit)).toBe(1);
      expect(run.stderr().trim().split('\n'), run.output()).toEqual([
        `Port ${port} (PORT) is already in use: stop what listens there (lsof -i :${port}, or ss -ltnp) or set PORT=<another port>.`,
      ]);
      expect(run.output()).not.toContain('starting players');
      expect(run.output()).not.toMatch(/\n\s+at /);
    } finally {
      taken.close();
    }
  }, 180_000);

  it('says when Postgres answers but the database or the role does not exist', async () => {
    const infra = await testInfra();
    const url = new URL(infra.databaseUrl);
    const nodb = new URL(url);
    nodb.pathname = '/ccs_no_such_database';
    const norole = new URL(url);
    norole.username = 'ccs_no_such_role';
    for (const [databaseUrl, expected] of [
      [nodb.href, /^Postgres at .* answers, but the database "ccs_no_such_database" does not exist: create it \(createdb .*ccs_no_such_database\)/],
      [norole.href, /^Postgres at .* answers, but refused the role "ccs_no_such_role" .*createuser/],
    ] as const) {
      const run = launch({ DATABASE_URL: databaseUrl, NATS_URL: infra.natsUrl, REDIS_URL: infra.redisUrl, PORT: String(await freePort()) });
      expect(await within(120_000, run.exit)).toBe(1);
      expect(run.stderr().trim().split('\n'), run.output()).toEqual([expect.stringMatching(expected)]);
    }
  }, 180_000);
});
