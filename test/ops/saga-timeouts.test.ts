/**
 * The sagas' waits against the gateway's bounds, checked mechanically: a chest
 * that was consumed must be answered with its opening, never with the gateway's 504. Chests waits
 * up to GRANT_WAIT_MS for collections after its own work; the gateway gives chests.v1.open and
 * chests.v1.open_batch the Bus bound of a write, NATS_REQUEST_TIMEOUT_MS. The check runs on the
 * schemas' defaults, on every k8s overlay's settings and on docker-compose.yml, each process with
 * the environment it really gets.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { Bus, OpenChest, OpenChests, SAGA_WORK_MARGIN_MS, sagaTimeoutProblems } from '@ccs/shared';
import { ChestsConfigSchema } from '../../services/chests/src/config.js';
import { StoreConfigSchema } from '../../services/store/src/config.js';
import { GatewayConfigSchema } from '../../services/gateway/src/config.js';
import { PlayersConfigSchema } from '../../services/players/src/config.js';
import { checkConfiguration } from '../../scripts/start/preflight.js';
import { parseEnvFile } from '../support/kustomize.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The settings that bound the sagas (the others are irrelevant here). */
const SAGA_SETTINGS = [
  'GRANT_WAIT_MS',
  'NATS_REQUEST_TIMEOUT_MS',
  'NATS_READ_TIMEOUT_MS',
  'CREDENTIALS_TIMEOUT_MS',
  'ARGON2_QUEUE_WAIT_MS',
  'STORE_TIMEOUT_MS',
  'STORE_GOOGLE_TIMEOUT_MS',
];

type Env = Record<string, string | undefined>;

/** The gateway's bound of a call, as server.ts builds its Bus from the gateway's configuration. */
function gatewayBoundOf(env: Env, contract: typeof OpenChest | typeof OpenChests): number {
  const gateway = GatewayConfigSchema.parse(env);
  return new Bus({} as never, '', gateway.NATS_REQUEST_TIMEOUT_MS, { readTimeoutMs: gateway.NATS_READ_TIMEOUT_MS }).boundOf(contract);
}

/** The saga bounds as each process reads them from its own environment (defaults applied). */
function boundsOf(env: { gateway: Env; chests: Env; players: Env; store?: Env }) {
  const gateway = GatewayConfigSchema.parse(env.gateway);
  const open = gatewayBoundOf(env.gateway, OpenChest);
  const openBatch = gatewayBoundOf(env.gateway, OpenChests);
  // Both openings are writes, bounded by NATS_REQUEST_TIMEOUT_MS; the check below uses that bound.
  expect({ open, openBatch }).toEqual({ open: gateway.NATS_REQUEST_TIMEOUT_MS, openBatch: gateway.NATS_REQUEST_TIMEOUT_MS });
  const players = PlayersConfigSchema.parse(env.players);
  const store = StoreConfigSchema.parse(env.store ?? env.chests);
  return {
    gatewayRequestTimeoutMs: Math.min(open, openBatch),
    gatewayCredentialsTimeoutMs: gateway.CREDENTIALS_TIMEOUT_MS,
    chestsGrantWaitMs: ChestsConfigSchema.parse(env.chests).GRANT_WAIT_MS,
    playersGrantWaitMs: players.GRANT_WAIT_MS,
    playersPasswordQueueWaitMs: players.ARGON2_QUEUE_WAIT_MS,
    gatewayStoreTimeoutMs: gateway.STORE_TIMEOUT_MS,
    storeGoogleTimeoutMs: store.STORE_GOOGLE_TIMEOUT_MS,
    storeGrantWaitMs: store.GRANT_WAIT_MS,
  };
}

const same = (env: Env) => ({ gateway: env, chests: env, players: env, store: env });

/** Every file under a directory, relative to the repository root. */
function filesUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)],
  );
}

/** An overlay's `ccs-config` literals (configMapGenerator, behavior merge) as KEY → value. */
function overlayLiterals(kustomization: string): Env {
  const doc = load(read(kustomization)) as { configMapGenerator?: { name: string; literals?: string[] }[] };
  const literals = (doc.configMapGenerator ?? []).filter((g) => g.name === 'ccs-config').flatMap((g) => g.literals ?? []);
  return Object.fromEntries(literals.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

/** A Compose service's environment, `${VAR:-default}` read as its default (what an empty shell gives). */
function composeEnv(service: string): Env {
  const compose = load(read('docker-compose.yml'), { schema: CORE_SCHEMA.withTags(mergeTag) }) as {
    services: Record<string, { environment?: Record<string, unknown> | string[] }>;
  };
  const raw = compose.services[service]?.environment ?? {};
  const pairs = Array.isArray(raw) ? raw.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]) : Object.entries(raw);
  // A secret left empty (it comes from .env) is as good as unset for these settings.
  return Object.fromEntries(
    pairs
      .map(([k, v]) => [k, String(v).replace(/\$\{[A-Z0-9_]+(?::?-([^}]*))?\}/g, (_, d: string | undefined) => d ?? '')])
      .filter(([, v]) => v !== ''),
  );
}

describe('the sagas never answer 504 after their work completed', () => {
  it('bounds chests.v1.open and chests.v1.open_batch by NATS_REQUEST_TIMEOUT_MS, with no shorter bound per route', () => {
    expect(gatewayBoundOf({}, OpenChest)).toBe(5000);
    expect(gatewayBoundOf({ NATS_REQUEST_TIMEOUT_MS: '7000', NATS_READ_TIMEOUT_MS: '1000' }, OpenChests)).toBe(7000);
    // The gateway's routes call both with the Bus's own bound (no per-call timeoutMs).
    const routes = read('services/gateway/src/routes/v1/chest-opening.ts');
    const calls = routes.match(/bus\.request\(OpenChests?\b[^;]*;/g) ?? [];
    expect(calls).toHaveLength(2);
    for (const call of calls) expect(call).not.toMatch(/timeoutMs/);
    // server.ts builds the gateway's Bus from these two settings.
    expect(read('services/gateway/src/server.ts')).toMatch(
      /new Bus\(nc, config\.NATS_PREFIX, config\.NATS_REQUEST_TIMEOUT_MS, \{ readTimeoutMs: config\.NATS_READ_TIMEOUT_MS \}\)/,
    );
  });

  it('keeps GRANT_WAIT_MS plus the work margin below those bounds with the schema defaults', () => {
    const bounds = boundsOf(same({}));
    expect(bounds.chestsGrantWaitMs + SAGA_WORK_MARGIN_MS).toBeLessThanOrEqual(bounds.gatewayRequestTimeoutMs);
    expect(sagaTimeoutProblems(bounds)).toEqual([]);
  });

  it('keeps them below with the settings of every k8s overlay (base config.env plus its literals)', () => {
    const base = Object.fromEntries(parseEnvFile(path.join(ROOT, 'deploy/k8s/base/config.env')));
    const overlays = readdirSync(path.join(ROOT, 'deploy/k8s/overlays'));
    expect(overlays).toEqual(expect.arrayContaining(['dev', 'production']));
    for (const overlay of overlays) {
      const env = { ...base, ...overlayLiterals(`deploy/k8s/overlays/${overlay}/kustomization.yaml`) };
      expect(sagaTimeoutProblems(boundsOf(same(env))), overlay).toEqual([]);
    }
    // Nothing else under deploy/k8s sets these (a container `env:` would escape the check above).
    const setters = filesUnder('deploy/k8s').filter(
      (f) =>
        !f.endsWith('base/config.env') && !/overlays\/[^/]+\/kustomization\.yaml$/.test(f) && SAGA_SETTINGS.some((name) => read(f).includes(name)),
    );
    expect(setters).toEqual([]);
  });

  it('keeps them below with the environment docker-compose.yml gives each service', () => {
    const env = { gateway: composeEnv('gateway'), chests: composeEnv('chests'), players: composeEnv('players'), store: composeEnv('store') };
    expect(env.gateway.NATS_URL).toBe('nats://nats:4222'); // the file was read, anchors merged
    expect(sagaTimeoutProblems(boundsOf(env))).toEqual([]);
  });

  it('names the settings that would let a consumed chest or a created player answer 504', () => {
    expect(sagaTimeoutProblems(boundsOf(same({ GRANT_WAIT_MS: '4500' })))).toEqual([
      'GRANT_WAIT_MS (chests) vs NATS_REQUEST_TIMEOUT_MS (gateway): an opening waits up to 4500 ms but the gateway gives it 5000 ms; keep the wait at least 1000 ms below the bound.',
      'GRANT_WAIT_MS (players) vs NATS_REQUEST_TIMEOUT_MS (gateway): a guest creation waits up to 4500 ms but the gateway gives it 5000 ms; keep the wait at least 1000 ms below the bound.',
    ]);
    // Only the gateway's bound lowered, in its own environment: still found.
    expect(sagaTimeoutProblems(boundsOf({ gateway: { NATS_REQUEST_TIMEOUT_MS: '2900' }, chests: {}, players: { GRANT_WAIT_MS: '0' } }))).toEqual([
      'GRANT_WAIT_MS (chests) vs NATS_REQUEST_TIMEOUT_MS (gateway): an opening waits up to 2000 ms but the gateway gives it 2900 ms; keep the wait at least 1000 ms below the bound.',
    ]);
    expect(sagaTimeoutProblems(boundsOf(same({ STORE_GOOGLE_TIMEOUT_MS: '5000' })))).toEqual([
      '2 × STORE_GOOGLE_TIMEOUT_MS + GRANT_WAIT_MS (store) vs STORE_TIMEOUT_MS (gateway): a Google Play purchase (two calls to Google and the grant wait) waits up to 12000 ms but the gateway gives it 12000 ms; keep the wait at least 1000 ms below the bound.',
    ]);
    expect(sagaTimeoutProblems(boundsOf(same({ CREDENTIALS_TIMEOUT_MS: '6000' })))).toEqual([
      'ARGON2_QUEUE_WAIT_MS + GRANT_WAIT_MS (players) vs CREDENTIALS_TIMEOUT_MS (gateway): a registration (password queue and grant wait) waits up to 7000 ms but the gateway gives it 6000 ms; keep the wait at least 1000 ms below the bound.',
    ]);
  });

  it('is checked by npm start before anything starts, one line naming both settings', () => {
    expect(checkConfiguration({ NATS_REQUEST_TIMEOUT_MS: '2500' })).toEqual([
      expect.stringMatching(/^Invalid settings GRANT_WAIT_MS \(chests\) vs NATS_REQUEST_TIMEOUT_MS \(gateway\): an opening waits up to 2000 ms/),
      expect.stringMatching(/^Invalid settings GRANT_WAIT_MS \(players\) vs NATS_REQUEST_TIMEOUT_MS/),
    ]);
    expect(checkConfiguration({ GRANT_WAIT_MS: '4001' })).toHaveLength(2);
    expect(checkConfiguration({ GRANT_WAIT_MS: '4000' })).toEqual([]);
    expect(checkConfiguration({})).toEqual([]);
    // scripts/start.ts prints these lines and exits 1 before starting anything.
    expect(read('scripts/start.ts')).toMatch(/const settings = checkConfiguration\(serviceEnv\);[\s\S]*?process\.exit\(1\)/);
  });
});
