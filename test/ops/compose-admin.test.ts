/**
 * `npm run admin` against the compose stack, as docs/guide.md ("Docker") and docs/operations.md
 * give it: the same commands in both; NATS_URL is the address compose publishes NATS on; the user
 * is `admin`, whose password the configuration compose mounts reads from the variable compose
 * passes from `.env`, which generate-secrets.ts writes. No Docker engine here, so the host line
 * runs for real against a nats-server started as compose starts it (its configuration, its
 * environment from a generated `.env`), with a players responder as the players user: the CLI
 * lists the app it answers. The container line is checked against the compose file.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generateSecrets } from '../../scripts/generate-secrets.js';
import { blocksUnder, commandsOf, ROOT, type ShellCommand } from '../support/shell-docs.js';
import { freePort } from '@ccs/shared/testing';

const NATS_SERVER = '/usr/sbin/nats-server';
const run = promisify(execFile);

const Service = z
  .object({
    command: z.array(z.string()).optional(),
    environment: z.record(z.string(), z.union([z.string(), z.number()])).default({}),
    ports: z.array(z.string()).default([]),
    volumes: z.array(z.string()).default([]),
  })
  .passthrough();
const compose = z
  .object({ services: z.record(z.string(), Service) })
  .parse(load(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { schema: CORE_SCHEMA.withTags(mergeTag) }));
const nats = compose.services.nats!;

/** The admin commands of a document's section: the host line (npm run admin) and the container line. */
function adminBlock(file: string, heading: string): string {
  const blocks = blocksUnder(file, heading).filter((b) => /npm run admin -- list-apps/.test(b.text) && /NATS_USER=admin/.test(b.text));
  expect(blocks, `${file}, "${heading}"`).toHaveLength(1);
  return blocks[0]!.text;
}
const hostLine = (commands: ShellCommand[]) => commands.find((c) => c.argv.slice(0, 3).join(' ') === 'npm run admin')!;
const containerLine = (commands: ShellCommand[]) => commands.find((c) => c.argv.slice(0, 3).join(' ') === 'docker compose exec')!;

/** `${NAME:-default}` of the compose file, resolved against an env file's values as compose does. */
const interpolate = (value: string, env: Record<string, string>) =>
  value.replace(/\$\{(\w+):-([^}]*)\}/g, (_, name: string, fallback: string) => env[name] || fallback);

/** KEY=VALUE lines of an env file. */
const parseEnv = (text: string) =>
  Object.fromEntries(
    text
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

const guide = adminBlock('docs/guide.md', 'Docker');
const operations = adminBlock('docs/operations.md', 'The admin command');

describe('the admin command against the compose stack (docs)', () => {
  it('is the same in docs/guide.md and docs/operations.md', () => {
    expect(operations).toBe(guide);
  });

  it('reaches NATS where compose publishes it, as the user admin, with the password compose gives that user', () => {
    const host = hostLine(commandsOf(guide));
    // Compose publishes the NATS port on 127.0.0.1 at ${NATS_PORT:-4222}; the URL names that address.
    const published = nats.ports.map((p) => /^([\d.]+):(\$\{NATS_PORT:-\d+\}):(\d+)$/.exec(p)).find(Boolean);
    expect(published, JSON.stringify(nats.ports)).toBeDefined();
    expect(host.env.NATS_URL).toBe(`nats://${published![1]}:${published![2]}`);
    expect(nats.command).not.toContain('-p'); // so the server listens on 4222 inside
    expect(published![3]).toBe('4222');
    expect(host.env.NATS_USER).toBe('admin');
    // The configuration compose mounts knows admin by $NATS_PASSWORD_ADMIN, which compose passes from .env.
    const mounted = nats.volumes.find((v) => v.endsWith(':/etc/nats/nats-server.conf:ro'))!;
    const conf = readFileSync(path.join(ROOT, interpolate(mounted.split(':/etc')[0]!, {})), 'utf8');
    expect(conf).toMatch(/user: admin\s+password: \$NATS_PASSWORD_ADMIN\b/);
    expect(nats.environment.NATS_PASSWORD_ADMIN).toBe('${NATS_PASSWORD_ADMIN:-}');
    expect(host.env.NATS_PASSWORD).toContain("'s/^NATS_PASSWORD_ADMIN=//p' .env");
    expect(Object.keys(parseEnv(generateSecrets()))).toContain('NATS_PASSWORD_ADMIN');
  });

  it("runs in the grants keeper's container, on the compose network, as admin", () => {
    const exec = containerLine(commandsOf(guide));
    expect(exec, guide).toBeDefined();
    const service = exec.argv.find((w, i) => i > 3 && !w.startsWith('-') && !exec.argv[i - 1]!.startsWith('-e'))!;
    const keeper = compose.services[service]!;
    // Its image has the compiled command (it runs it), and its NATS_URL is compose's NATS.
    expect(keeper.command?.slice(0, 2)).toEqual(['node', 'tools/admin/dist/main.js']);
    expect(exec.argv.slice(exec.argv.indexOf(service) + 1, exec.argv.indexOf(service) + 3)).toEqual(['node', 'tools/admin/dist/main.js']);
    expect(keeper.environment.NATS_URL).toBe('nats://nats:4222');
    const set = exec.argv.filter((_, i) => exec.argv[i - 1] === '-e');
    expect(set).toContain('NATS_USER=admin');
    expect(set).toContain(`NATS_PASSWORD=${hostLine(commandsOf(guide)).env.NATS_PASSWORD}`);
  });
});

describe.skipIf(!existsSync(NATS_SERVER))('the admin command against a nats-server configured as compose configures it', () => {
  let dir: string;
  let port: number;
  let server: ChildProcess | undefined;
  let responder: NatsConnection | undefined;
  let dotenv: Record<string, string>;
  let log = '';
  const appId = '7bd71762-d55a-4e31-ad9c-b429fea3558e';

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ccs-compose-admin-'));
    writeFileSync(path.join(dir, '.env'), generateSecrets());
    dotenv = parseEnv(readFileSync(path.join(dir, '.env'), 'utf8'));
    port = await freePort();
    // The server's environment as compose gives it (each `${NATS_PASSWORD_X:-}` from .env), its configuration file.
    const env = Object.fromEntries(Object.entries(nats.environment).map(([k, v]) => [k, interpolate(String(v), dotenv)]));
    const conf = path.join(ROOT, 'deploy/nats/nats-server.conf');
    server = spawn(NATS_SERVER, ['-c', conf, '-a', '127.0.0.1', '-p', String(port)], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    server.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    // players, as its own user, answers the admin's list of apps.
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        responder = await connect({
          servers: `nats://127.0.0.1:${port}`,
          user: 'players',
          pass: dotenv.NATS_PASSWORD_PLAYERS,
          inboxPrefix: '_INBOX_players',
          reconnect: false,
        });
        break;
      } catch (err) {
        if (Date.now() > deadline || server.exitCode !== null) throw new Error(`nats-server did not start: ${String(err)}\n${log}`, { cause: err });
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const app = {
      appId,
      name: 'Compose Demo',
      isDemo: true,
      contentVersion: 1,
      createdAt: '2026-11-28T06:00:00.000Z',
      players: 2,
      liveKeys: { publishable: 1, secret: 1 },
    };
    responder.subscribe('players.v1.admin_list_apps', { callback: (_e, m) => m.respond(new TextEncoder().encode(JSON.stringify({ apps: [app] }))) });
    await responder.flush();
  });

  afterAll(async () => {
    await responder?.close().catch(() => undefined);
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts with every password generate-secrets.ts writes (nats-server parses them as configuration values)', async () => {
    // 40 fresh .env files, 360 passwords: hex alone failed on about one password in fifteen.
    const conf = path.join(ROOT, 'deploy/nats/nats-server.conf');
    for (let i = 0; i < 40; i++) {
      const env = Object.fromEntries(Object.entries(nats.environment).map(([k, v]) => [k, interpolate(String(v), parseEnv(generateSecrets()))]));
      const checked = await run(NATS_SERVER, ['-c', conf, '-t'], { env: { PATH: process.env.PATH, ...env } }).then(
        () => 'valid',
        (err: { stderr: string }) => err.stderr,
      );
      expect(checked).toBe('valid');
    }
  });

  /** The documented host line through bash, from the repository, with `.env` the generated one and NATS_PORT the server's. */
  async function runDocumented(line: string) {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NATS_')));
    const command = line.replace(/ \.env\)/g, ` ${path.join(dir, '.env')})`);
    return run('bash', ['-c', command], { cwd: ROOT, env: { ...env, NATS_PORT: String(port) }, timeout: 60_000 }).then(
      (r) => ({ code: 0, ...r }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
    );
  }

  it('lists the apps players answers, as the documented line runs it', async () => {
    const line = hostLine(commandsOf(guide)).source;
    expect(line.match(/ \.env\)/g), line).toHaveLength(1);
    const result = await runDocumented(line);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain(appId);
    expect(result.stdout).toContain('Compose Demo');
    expect(log).not.toMatch(/violation/i);
  }, 90_000);

  it('is refused without a user, and as a service user', async () => {
    const documented = hostLine(commandsOf(guide));
    const anonymous = await runDocumented(`NATS_URL=${documented.env.NATS_URL} npm run admin -- list-apps`);
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toMatch(/Cannot reach NATS at nats:\/\/127\.0\.0\.1:\d+ \(AUTHORIZATION_VIOLATION\)/);
    const asGateway = await runDocumented(
      documented.source.replace('NATS_USER=admin', 'NATS_USER=gateway').replace('NATS_PASSWORD_ADMIN', 'NATS_PASSWORD_GATEWAY'),
    );
    expect(asGateway.code).toBe(1);
    expect(asGateway.stdout).not.toContain(appId);
    expect(log).toMatch(/Publish Violation .*"players\.v1\.admin_list_apps"/);
  }, 90_000);
});
