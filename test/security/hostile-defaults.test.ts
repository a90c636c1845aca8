/**
 * Safe by default (docs/design.md §6): what ships in the repository opens nothing and exposes nothing.
 * - docker-compose.yml publishes every port on 127.0.0.1 and carries no literal secret; /metrics
 *   has its own port there, never the API's;
 * - the Kubernetes manifests serve /metrics on a port of its own that the gateway's Service leaves
 *   out, and their example secrets are refused;
 * - a shipped placeholder is refused as a secret whatever NODE_ENV says, and NODE_ENV=production
 *   refuses to start (exit 1, one message saying what to set and how) without FAIRNESS_SEED_KEY,
 *   STORE_CREDENTIALS_KEY, CONSOLE_SESSION_KEY, JWT_PRIVATE_KEY and NATS credentials: the real
 *   service processes, started as the image starts them.
 * What each NATS user may do on JetStream (no purge, no other service's durable) is shown against
 * a real nats-server in test/ops/nats-permissions.test.ts.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createLogger, createPool, loadConfig, migrateService, SHIPPED_PLACEHOLDERS } from '@ccs/shared';
import { createTestDatabase, testInfra } from '@ccs/shared/testing';
import { checkConfiguration } from '../../scripts/start/preflight.js';
import { generateSecrets } from '../../scripts/generate-secrets.js';
import { ChestsConfigSchema } from '../../services/chests/src/config.js';
import { CollectionsConfigSchema } from '../../services/collections/src/config.js';
import { EgressConfigSchema } from '../../services/egress/src/config.js';
import { GatewayConfigSchema } from '../../services/gateway/src/config.js';
import { ensureDemoApp } from '../../services/players/src/apps/demo-app.js';
import { PlayersConfigSchema } from '../../services/players/src/config.js';
import { StoreConfigSchema } from '../../services/store/src/config.js';
import { insertApiKey, resolveApiKey } from '../../services/players/src/repositories/api-keys-repo.js';
import { playersService } from '../../services/players/src/service.js';
import { WalletConfigSchema } from '../../services/wallet/src/config.js';
import {
  appContainer,
  deployment,
  environmentOf,
  find,
  OVERLAYS,
  rendered,
  SECRET_EXAMPLE,
  SERVICES,
  type Overlay,
} from '../support/k8s-manifests.js';
import { kustomizeUnavailable } from '../support/kustomize.js';
import { looksLikeRealSecret } from '../support/secret-scan.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const SCHEMAS = {
  players: PlayersConfigSchema,
  wallet: WalletConfigSchema,
  chests: ChestsConfigSchema,
  collections: CollectionsConfigSchema,
  egress: EgressConfigSchema,
  store: StoreConfigSchema,
  gateway: GatewayConfigSchema,
} as const;

/** A `${VAR:-default}` or `${VAR}` reference resolved the way compose does with VAR unset. */
const withDefaults = (s: string) => s.replace(/\$\{[A-Z_]+(?::?-([^}]*))?\}/g, (_m, d: string | undefined) => d ?? '');

/** The error a config load throws (or undefined). */
function refusal(load: () => unknown): string | undefined {
  try {
    load();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
}

/** Generated secrets as an environment (what `scripts/generate-secrets.ts --out .env` writes). */
function generated(): Record<string, string> {
  return Object.fromEntries(
    generateSecrets()
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

describe('docker-compose.yml', () => {
  const Service = z
    .object({
      ports: z.array(z.union([z.string(), z.number()])).optional(),
      environment: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
    })
    .passthrough();
  const compose = z
    .object({ services: z.record(z.string(), Service) })
    .passthrough()
    .parse(load(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { schema: CORE_SCHEMA.withTags(mergeTag) }));

  it('publishes every port on 127.0.0.1 only (BIND_ADDRESS opens the gateway on purpose)', () => {
    const published = Object.entries(compose.services).flatMap(([name, s]) => (s.ports ?? []).map((p) => [name, String(p)] as const));
    expect(published.length).toBeGreaterThanOrEqual(5);
    for (const [name, p] of published) {
      // host:hostPort:containerPort with every variable at its default.
      const parts = withDefaults(p).split(':');
      expect(parts, `${name}: ${p}`).toHaveLength(3);
      expect(parts[0], `${name}: ${p}`).toBe('127.0.0.1');
    }
  });

  it('carries no literal secret: every secret is a variable without a default', () => {
    const secretName = /PASSWORD|SECRET|_KEY$|TOKEN|CREDS/;
    let secrets = 0;
    for (const [name, s] of Object.entries(compose.services)) {
      for (const [key, raw] of Object.entries(s.environment ?? {})) {
        const value = String(raw ?? '');
        if (secretName.test(key)) {
          secrets++;
          expect(value, `${name}.${key}`).toMatch(/^\$\{[A-Z_]+(:-)?\}$/);
        }
        // Nor one in another setting (a URL with a password, a token).
        const resolved = withDefaults(value);
        expect(/\/\/[^/@:]+:[^/@]+@/.test(resolved), `${name}.${key}: ${value}`).toBe(false);
        if (resolved && !/^(https?|postgres|nats|redis):\/\//.test(resolved) && !/^[\d.]+$/.test(resolved) && resolved.length >= 20) {
          expect(looksLikeRealSecret(resolved), `${name}.${key}`).toBeUndefined();
        }
        for (const placeholder of SHIPPED_PLACEHOLDERS) expect(resolved, `${name}.${key}`).not.toContain(placeholder);
      }
    }
    expect(secrets).toBeGreaterThanOrEqual(10);
  });

  it('serves /metrics on METRICS_PORT, apart from the API port', () => {
    const gateway = compose.services.gateway!;
    const env = gateway.environment!;
    expect(Number(env.METRICS_PORT)).toBeGreaterThan(0);
    expect(String(env.METRICS_PORT)).not.toBe(String(env.PORT));
    const targets = (gateway.ports ?? []).map((p) => withDefaults(String(p)).split(':'));
    const api = targets.find((t) => t[2] === String(env.PORT));
    expect(api?.[0]).toBe('127.0.0.1');
    const metrics = targets.find((t) => t[2] === String(env.METRICS_PORT));
    expect(metrics?.[0]).toBe('127.0.0.1');
    expect(metrics?.[1]).not.toBe(api?.[1]);
  });
});

describe.skipIf(kustomizeUnavailable)('Kubernetes manifests', () => {
  const KService = z.object({ spec: z.object({ ports: z.array(z.object({ port: z.number(), targetPort: z.union([z.number(), z.string()]) })) }) });

  it.each(Object.keys(OVERLAYS) as Overlay[])('%s: /metrics has its own port, which the gateway Service does not expose', (overlay) => {
    const objs = rendered[overlay];
    const d = deployment(objs, 'gateway');
    const c = appContainer(d, 'gateway');
    const env = environmentOf(objs, c);
    const metricsPort = Number(env.METRICS_PORT);
    expect(metricsPort).toBeGreaterThan(0);
    expect(metricsPort).not.toBe(Number(env.PORT));
    expect(d.spec.template.metadata.annotations['prometheus.io/port']).toBe(String(metricsPort));
    const byName = new Map(c.ports.map((p) => [p.name, p.containerPort]));
    const svc = KService.parse(find(objs, 'Service', 'gateway'));
    for (const p of svc.spec.ports) {
      const target = typeof p.targetPort === 'number' ? p.targetPort : byName.get(p.targetPort);
      expect(target).toBe(Number(env.PORT));
    }
  });

  it.each(SERVICES)('the example Secret does not start %s: its placeholders are refused', (name) => {
    const objs = rendered.base;
    const env = { ...environmentOf(objs, appContainer(deployment(objs, name), name)), NODE_ENV: 'production' };
    const message = refusal(() => loadConfig(SCHEMAS[name], env));
    expect(message, name).toMatch(/Refusing to start with unsafe secrets/);
  });

  it('ships no credentials in any overlay: the Secret comes from scripts/generate-secrets.ts', () => {
    for (const overlay of Object.keys(OVERLAYS) as Overlay[])
      expect(rendered[overlay].filter((o) => o.kind === 'Secret' && o.metadata.name === 'ccs-secrets')).toEqual([]);
    for (const [key, value] of Object.entries(SECRET_EXAMPLE)) if (value) expect(value.includes('CHANGE_ME'), key).toBe(true);
  });
});

describe('secrets in the configuration', () => {
  it.each(SHIPPED_PLACEHOLDERS)('refuses the shipped placeholder %s as a secret, in development too', (placeholder) => {
    for (const [key, schema] of [
      ['CHESTS_DEMO_API_KEY', PlayersConfigSchema],
      ['CHESTS_DEMO_SECRET_KEY', PlayersConfigSchema],
      ['CONSOLE_SESSION_KEY', GatewayConfigSchema],
      ['STORE_CREDENTIALS_KEY', StoreConfigSchema],
      ['NATS_PASSWORD', WalletConfigSchema],
    ] as const) {
      const env = { NATS_USER: 'wallet', [key]: key === 'NATS_PASSWORD' || placeholder.length >= 32 ? placeholder : placeholder.padEnd(32, '0') };
      expect(
        refusal(() => loadConfig(schema, env)),
        `${key}=${env[key]}`,
      ).toMatch(new RegExp(`${key}: is a placeholder shipped in this repository`));
    }
  });

  it('accepts generated secrets, in production too', () => {
    const secrets = generated();
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      const user = name === 'gateway' ? 'gateway' : name;
      const env = { ...secrets, NODE_ENV: 'production', NATS_USER: user, NATS_PASSWORD: secrets[`NATS_PASSWORD_${user.toUpperCase()}`] };
      expect(
        refusal(() => loadConfig(schema, env)),
        name,
      ).toBeUndefined();
    }
  });

  it('npm start checks the same before starting anything', () => {
    const lines = checkConfiguration({ NODE_ENV: 'production' });
    expect(lines.join('\n')).toMatch(/FAIRNESS_SEED_KEY: required when NODE_ENV=production/);
    expect(lines.join('\n')).toMatch(/CONSOLE_SESSION_KEY: required when NODE_ENV=production/);
    expect(lines.join('\n')).toMatch(/STORE_CREDENTIALS_KEY: required when NODE_ENV=production/);
    expect(checkConfiguration({ CHESTS_DEMO_SECRET_KEY: 'demo_local_secret_change_me_0000' }).join('\n')).toMatch(
      /CHESTS_DEMO_SECRET_KEY: is a placeholder/,
    );
    expect(checkConfiguration({})).toEqual([]);
  });
});

/** Starts a service's entry point as the image does (NODE_ENV=production) and collects its exit. */
function runService(service: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=development', `services/${service}/src/main.ts`], {
      cwd: ROOT,
      // Nothing of the test's own environment that could satisfy the check.
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

describe('NODE_ENV=production without the secrets', () => {
  // Unreachable infrastructure: the refusal comes before any connection is tried.
  const infra = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/postgres', NATS_URL: 'nats://127.0.0.1:1', REDIS_URL: 'redis://127.0.0.1:1' };
  const nats = (user: string) => ({ NATS_USER: user, NATS_PASSWORD: randomBytes(16).toString('hex') });

  it.each([
    ['chests', 'FAIRNESS_SEED_KEY', /openssl rand -hex 32/],
    ['gateway', 'CONSOLE_SESSION_KEY', /openssl rand -hex 32/],
    ['store', 'STORE_CREDENTIALS_KEY', /openssl rand -hex 32/],
    ['players', 'JWT_PRIVATE_KEY', /openssl genpkey -algorithm EC/],
  ] as const)(
    '%s exits 1 naming %s and how to generate it',
    async (service, setting, how) => {
      const run = await runService(service, { ...infra, ...nats(service) });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(`[${service}] Refusing to start with unsafe secrets:`);
      expect(run.stderr).toMatch(new RegExp(`${setting}: required when NODE_ENV=production: .*`));
      expect(run.stderr).toMatch(how);
      expect(run.stderr).toContain('scripts/generate-secrets.ts');
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.stderr).not.toMatch(/Cannot reach/);
    },
    30_000,
  );

  it('wallet exits 1 without NATS credentials, and with a shipped NATS password', async () => {
    const none = await runService('wallet', infra);
    expect(none.code, none.stderr).toBe(1);
    expect(none.stderr).toMatch(/NATS_PASSWORD: required when NODE_ENV=production/);
    const shipped = await runService('wallet', { ...infra, NATS_USER: 'wallet', NATS_PASSWORD: 'dev-only-nats-wallet' });
    expect(shipped.code, shipped.stderr).toBe(1);
    expect(shipped.stderr).toMatch(/NATS_PASSWORD: is a placeholder shipped in this repository/);
  }, 30_000);
});

describe('a database from the days of the shipped demo keys', () => {
  it('players revokes them at start: the old compose and dev keys open nothing', async () => {
    const infra = await testInfra();
    const db = await createTestDatabase(infra);
    await migrateService(playersService, db.url);
    const pool = createPool(db.url, 'players', 2);
    try {
      const log = createLogger('players', 'silent');
      const own = `demo_${randomBytes(16).toString('hex')}`;
      await ensureDemoApp(pool, own, log);
      const { appId } = (await resolveApiKey(pool, own))!;
      // As the former compose file and dev overlay left them.
      await insertApiKey(pool, appId, 'publishable', 'demo_local_key_change_me_0000');
      await insertApiKey(pool, appId, 'secret', 'demo_dev_secret_change_me_0000');
      expect(await resolveApiKey(pool, 'demo_local_key_change_me_0000')).toBeDefined();
      await ensureDemoApp(pool, own, log);
      expect(await resolveApiKey(pool, 'demo_local_key_change_me_0000')).toBeUndefined();
      expect(await resolveApiKey(pool, 'demo_dev_secret_change_me_0000')).toBeUndefined();
      // The app's own key still works.
      expect(await resolveApiKey(pool, own)).toEqual({ appId, keyKind: 'publishable' });
    } finally {
      await pool.end();
      await db.drop();
    }
  }, 30_000);
});
