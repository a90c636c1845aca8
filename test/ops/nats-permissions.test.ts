/**
 * NATS users and permissions (packages/shared/src/ops/nats-permissions.ts):
 * - statically: every contract subject has a responder and the callers its contract declares (and
 *   no one else), admin subjects are the admin CLI's and the admin API's alone, every subject a
 *   process's source calls or publishes is allowed to its role, and
 *   the shipped files (deploy/nats/nats-server.conf, values-production.yaml) are what the
 *   generator writes; compose and the Kubernetes manifests give every process its user;
 * - for real: a private nats-server (its own port and JetStream directory, killed at the end) runs
 *   the generated configuration, with a NATS_PREFIX; forbidden publishes are refused, and the whole
 *   stack (every service and the gateway, each with its own user) serves a registration, a
 *   credit, an opening and an App Store purchase through it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import { AckPolicy, connect, ErrorCode, type NatsConnection, type NatsError } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as shared from '@ccs/shared';
import { BaseConfigSchema, createLogger, inboxPrefixOf, startGrantsKeeper, startService, type BaseConfig, type RunningService } from '@ccs/shared';
import { createTestDatabase, freePort, testInfra } from '@ccs/shared/testing';
import {
  DURABLE_CONSUMERS,
  callersOf,
  eventSubjects,
  GRANT_PRODUCERS,
  isAdminSubject,
  NATS_ROLES,
  natsPermissions,
  NOTICES,
  passwordVariable,
  requestContracts,
  requestSubjects,
  responderOf,
  SERVICE_ROLES,
  type NatsRole,
} from '../../packages/shared/src/ops/nats-permissions.js';
import { renderServerConf } from '../../packages/shared/src/ops/nats-server-conf.js';
import { CONF_FILE, DEV_CONFIGMAP_FILE, devConfigMap, VALUES_FILE, withHelmAuthorization } from '../../scripts/nats-permissions.js';
import { startGateway, type RunningGateway } from '../../services/gateway/src/server.js';
import { GatewayConfigSchema } from '../../services/gateway/src/config.js';
import { playersService } from '../../services/players/src/service.js';
import { PlayersConfigSchema } from '../../services/players/src/config.js';
import { walletService } from '../../services/wallet/src/service.js';
import { WalletConfigSchema } from '../../services/wallet/src/config.js';
import { chestsService } from '../../services/chests/src/service.js';
import { ChestsConfigSchema } from '../../services/chests/src/config.js';
import { collectionsService } from '../../services/collections/src/service.js';
import { CollectionsConfigSchema } from '../../services/collections/src/config.js';
import { egressService } from '../../services/egress/src/service.js';
import { EgressConfigSchema } from '../../services/egress/src/config.js';
import { storeService } from '../../services/store/src/service.js';
import { StoreConfigSchema } from '../../services/store/src/config.js';
import { applePki } from '../support/store/apple-pki.js';
import { eventually, jsonApiHeaders } from '../support/stack.js';
import { rendered, deployment, appContainer, environmentOf, SERVICES, OVERLAYS, type Overlay } from '../support/k8s-manifests.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Permission a NATS subject pattern list grants to a concrete subject (`*` one token, `>` the rest). */
function allows(patterns: string[], subject: string): boolean {
  const s = subject.split('.');
  return patterns.some((p) => {
    const t = p.split('.');
    for (let i = 0; i < t.length; i++) {
      if (t[i] === '>') return s.length > i;
      if (i >= s.length || (t[i] !== '*' && t[i] !== s[i])) return false;
    }
    return t.length === s.length;
  });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const full = path.join(dir, f);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

/** The source files whose NATS use is each role's (the admin CLI is its own workspace, tools/admin). */
function filesOf(role: NatsRole): string[] {
  if (role === 'streams') return [path.join(ROOT, 'packages/shared/src/runtime/grants-keeper.ts')];
  if (role === 'admin') return sourceFiles(path.join(ROOT, 'tools/admin/src'));
  return sourceFiles(path.join(ROOT, `services/${role}/src`));
}

const CONTRACTS = new Map(
  Object.entries(shared).filter(([, v]) => typeof v === 'object' && v !== null && 'subject' in v) as [string, { subject: string }][],
);

describe('NATS permissions derived from the contracts', () => {
  const perms = natsPermissions();

  it('classifies every request subject: a service answers it, exactly the callers its contract declares may call it, admin subjects only the admin CLI and the admin API', () => {
    const subjects = requestSubjects();
    expect(subjects.length).toBeGreaterThan(30);
    for (const s of subjects) {
      const responder = responderOf(s) as NatsRole;
      expect(SERVICE_ROLES as readonly string[], s).toContain(responder);
      expect(allows(perms[responder].subscribe, s), `${responder} subscribes ${s}`).toBe(true);
      const callers = NATS_ROLES.filter((r) => allows(perms[r].publish, s));
      const declared = requestContracts().find((c) => c.subject === s)!.callers;
      expect(declared.length, `${s} declares its callers`).toBeGreaterThan(0);
      expect(callers, s).toEqual(NATS_ROLES.filter((r) => (declared as readonly string[]).includes(r)));
      expect(callers, s).toEqual([...callersOf(s)]);
      // The operator's subjects: the admin CLI and the gateway's admin API (studio scope), never a service.
      const services = callers.filter((r) => r !== 'admin' && r !== 'gateway');
      if (isAdminSubject(s)) expect(services, s).toEqual([]);
      // Nobody else answers it.
      for (const r of NATS_ROLES.filter((r) => r !== responder)) expect(allows(perms[r].subscribe, s), `${r} subscribes ${s}`).toBe(false);
    }
  });

  it("never lets the gateway reach an admin subject (but the admin API's), a grant, JetStream or a service's internal subject", () => {
    const gw = perms.gateway;
    // An admin subject the gateway may call is one its admin API uses (its contract appears in the
    // gateway's source): declaring the gateway a caller of any other is refused here.
    const gatewaySource = filesOf('gateway')
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const nameOf = new Map([...CONTRACTS].map(([name, c]) => [c.subject, name]));
    const adminApi = requestSubjects().filter((s) => isAdminSubject(s) && allows(gw.publish, s));
    expect(adminApi.length).toBeGreaterThan(0);
    for (const s of adminApi) expect(new RegExp(`\\b${nameOf.get(s)}\\b`).test(gatewaySource), `the gateway's source uses ${s}`).toBe(true);
    for (const s of requestSubjects().filter(
      (s) =>
        (isAdminSubject(s) && !callersOf(s).includes('gateway')) ||
        [
          'wallet.v1.debit',
          'wallet.v1.refund',
          'players.v1.inventory_access',
          'players.v1.admin_create_app',
          'players.v1.admin_rotate_keys',
        ].includes(s),
    )) {
      expect(allows(gw.publish, s), s).toBe(false);
    }
    for (const s of [
      'grants.wallet.credit',
      'grants.chests.grant',
      '$JS.API.STREAM.DELETE.GRANTS',
      '$JS.API.INFO',
      'notify.x.y',
      'events.apps.keys_changed',
    ]) {
      expect(allows(gw.publish, s), s).toBe(false);
    }
    expect(allows(gw.publish, 'players.v1.resolve_api_key')).toBe(true);
    for (const svc of SERVICE_ROLES) expect(allows(gw.publish, `${svc}.v1.health`)).toBe(true);
    expect(allows(perms.admin.publish, 'players.v1.login')).toBe(false);
  });

  it('lets only the producers its contract declares publish each grant, and each notice only its publishers and listeners; narrows JetStream to the grants stream', () => {
    const declared = (s: string) => [...CONTRACTS.values()].find((c) => c.subject === s) as { publishers?: string[]; listeners?: string[] };
    const publishing = (s: string) => NATS_ROLES.filter((r) => allows(perms[r].publish, s));
    for (const s of eventSubjects().filter((s) => s.startsWith('grants.'))) {
      expect(declared(s).publishers?.length, `${s} declares its publishers`).toBeGreaterThan(0);
      expect(GRANT_PRODUCERS[s], `${s} has producers`).toBeDefined();
      expect(publishing(s), s).toEqual([...GRANT_PRODUCERS[s]!]);
      expect(publishing(s), s).toEqual(NATS_ROLES.filter((r) => declared(s).publishers!.includes(r)));
    }
    for (const s of eventSubjects().filter((s) => !s.startsWith('grants.'))) {
      expect(NOTICES[s], `${s} is a known notice`).toBeDefined();
      expect(publishing(s), s).toEqual(NATS_ROLES.filter((r) => declared(s).publishers!.includes(r)));
      const listening = NATS_ROLES.filter((r) => allows(perms[r].subscribe, s));
      expect(listening, s).toEqual(NATS_ROLES.filter((r) => (declared(s).listeners ?? []).includes(r)));
    }
    for (const r of NATS_ROLES) {
      expect(allows(perms[r].publish, '$JS.API.STREAM.DELETE.GRANTS'), r).toBe(false);
      expect(allows(perms[r].publish, '$JS.API.STREAM.CREATE.OTHER'), r).toBe(false);
    }
  });

  it('lets a service use only its own durables, and never purge, delete or reconfigure the stream', () => {
    const named = Object.entries(DURABLE_CONSUMERS);
    // Every durable of the contracts has one owner and one filter.
    for (const d of Object.values(shared.DURABLE)) expect(DURABLE_CONSUMERS[d], d).toBeDefined();
    for (const svc of SERVICE_ROLES) {
      const pub = perms[svc].publish;
      for (const api of [
        'STREAM.PURGE',
        'STREAM.DELETE',
        'STREAM.UPDATE',
        'STREAM.MSG.DELETE',
        'STREAM.MSG.GET',
        'CONSUMER.LIST',
        'CONSUMER.NAMES',
      ]) {
        expect(allows(pub, `$JS.API.${api}.GRANTS`), `${svc} ${api}`).toBe(false);
      }
      expect(allows(pub, '$JS.API.STREAM.CREATE.GRANTS'), svc).toBe(true);
      expect(
        pub.filter((s) => s.includes('>') && s.startsWith('$JS.API')),
        svc,
      ).toEqual([]);
      for (const [durable, { service, subject }] of named) {
        const own = service === svc;
        expect(allows(pub, `$JS.API.CONSUMER.MSG.NEXT.GRANTS.${durable}`), `${svc} pulls ${durable}`).toBe(own);
        expect(allows(pub, `$JS.API.CONSUMER.INFO.GRANTS.${durable}`), `${svc} reads ${durable}`).toBe(own);
        expect(allows(pub, `$JS.API.CONSUMER.CREATE.GRANTS.${durable}.${subject}`), `${svc} creates ${durable}`).toBe(own);
        expect(allows(pub, `$JS.ACK.GRANTS.${durable}.1.2.3.4.5`), `${svc} acks ${durable}`).toBe(own);
        // Not with another filter (a wider durable would read other grants), not without one.
        expect(allows(pub, `$JS.API.CONSUMER.CREATE.GRANTS.${durable}.grants.>`), `${svc} widens ${durable}`).toBe(false);
        expect(allows(pub, `$JS.API.CONSUMER.CREATE.GRANTS.${durable}`), `${svc} creates ${durable} unfiltered`).toBe(false);
        expect(allows(pub, `$JS.API.CONSUMER.DURABLE.CREATE.GRANTS.${durable}`), `${svc} (legacy) ${durable}`).toBe(false);
        expect(allows(pub, `$JS.API.CONSUMER.DELETE.GRANTS.${durable}`), `${svc} deletes ${durable}`).toBe(false);
      }
      // A retired name: its new name's service reads and deletes it (the handover), creates and pulls nothing of it.
      for (const [old, now] of Object.entries(shared.RETIRED_DURABLES)) {
        const own = DURABLE_CONSUMERS[now]!.service === svc;
        expect(allows(pub, `$JS.API.CONSUMER.INFO.GRANTS.${old}`), `${svc} reads ${old}`).toBe(own);
        expect(allows(pub, `$JS.API.CONSUMER.DELETE.GRANTS.${old}`), `${svc} deletes ${old}`).toBe(own);
        expect(allows(pub, `$JS.API.CONSUMER.MSG.NEXT.GRANTS.${old}`), `${svc} pulls ${old}`).toBe(false);
        expect(allows(pub, `$JS.API.CONSUMER.CREATE.GRANTS.${old}.${DURABLE_CONSUMERS[now]!.subject}`), `${svc} creates ${old}`).toBe(false);
      }
    }
    // The keeper alone may update and purge the stream; it publishes no grant and reads no durable.
    expect(NATS_ROLES.filter((r) => allows(perms[r].publish, '$JS.API.STREAM.PURGE.GRANTS'))).toEqual(['streams']);
    expect(NATS_ROLES.filter((r) => allows(perms[r].publish, '$JS.API.STREAM.UPDATE.GRANTS'))).toEqual(['streams']);
    expect(allows(perms.streams.publish, 'grants.wallet.credit')).toBe(false);
    expect(allows(perms.streams.publish, '$JS.API.CONSUMER.MSG.NEXT.GRANTS.wallet-credit-grants')).toBe(false);
    expect(allows(perms.streams.publish, '$JS.API.STREAM.DELETE.GRANTS')).toBe(false);
  });

  it("allows every subject each process's source calls, publishes or listens to", () => {
    const gaps: string[] = [];
    for (const role of NATS_ROLES) {
      const p = perms[role];
      for (const file of filesOf(role)) {
        const src = readFileSync(file, 'utf8');
        const rel = path.relative(ROOT, file);
        // Contracts used in a call: bus.request(X, …), contentRead(request, X, …).
        for (const m of src.matchAll(/(?:\.request|contentRead)\(\s*(?:request,\s*)?([A-Z]\w+)\s*,/g)) {
          const c = CONTRACTS.get(m[1]!);
          if (c && !allows(p.publish, c.subject)) gaps.push(`${role} (${rel}) calls ${c.subject}`);
        }
        for (const m of src.matchAll(/\.notify\(\s*([A-Z]\w+)|publish\(prefixed\([^,]+,\s*([A-Z]\w+)\.subject/g)) {
          const c = CONTRACTS.get((m[1] ?? m[2])!);
          if (c && !allows(p.publish, c.subject)) gaps.push(`${role} (${rel}) publishes ${c.subject}`);
        }
        for (const m of src.matchAll(/\.listen\(\s*([A-Z]\w+)/g)) {
          const c = CONTRACTS.get(m[1]!);
          if (c && !allows(p.subscribe, c.subject)) gaps.push(`${role} (${rel}) listens to ${c.subject}`);
        }
        for (const m of src.matchAll(/(?:enqueue\(\s*\w+,|outboxMessage\()\s*([A-Z]\w+)/g)) {
          const c = CONTRACTS.get(m[1]!);
          if (c && !allows(p.publish, c.subject)) gaps.push(`${role} (${rel}) produces ${c.subject}`);
        }
        if (/healthSubject\(/.test(src) && !SERVICE_ROLES.every((s) => allows(p.publish, `${s}.v1.health`)) && role === 'gateway')
          gaps.push('gateway health');
        if (/\.request\(adminContentVersion\(/.test(src)) {
          for (const s of shared.CONTENT_SERVICES)
            if (!allows(p.publish, `${s}.v1.admin_content_version`)) gaps.push(`${role} (${rel}) calls ${s}.v1.admin_content_version`);
        }
      }
    }
    expect(gaps).toEqual([]);
  });

  it('ships the generated files unchanged (npx tsx scripts/nats-permissions.ts rewrites them)', () => {
    expect(readFileSync(CONF_FILE, 'utf8')).toBe(renderServerConf());
    expect(readFileSync(DEV_CONFIGMAP_FILE, 'utf8')).toBe(devConfigMap());
    const values = readFileSync(VALUES_FILE, 'utf8');
    expect(values).toBe(withHelmAuthorization(values));
    const parsed = load(values) as {
      config: { merge: { authorization: { users: { user: string }[] } } };
      container: { env: Record<string, unknown> };
    };
    expect(parsed.config.merge.authorization.users.map((u) => u.user)).toEqual([...NATS_ROLES]);
    for (const r of NATS_ROLES) expect(parsed.container.env[passwordVariable(r)], r).toBeDefined();
  });

  it('renders the prefix into every subject, stream and ack subject', () => {
    const p = natsPermissions('stage');
    expect(allows(p.gateway.publish, 'stage.players.v1.login')).toBe(true);
    expect(allows(p.gateway.publish, 'players.v1.login')).toBe(false);
    expect(allows(p.chests.publish, 'stage.grants.openings.granted')).toBe(true);
    expect(allows(p.chests.publish, '$JS.API.STREAM.INFO.stage_GRANTS')).toBe(true);
    expect(allows(p.wallet.publish, '$JS.ACK.stage_GRANTS.stage_wallet-credit-grants.1.2.3.4.5')).toBe(true);
    expect(allows(p.wallet.publish, '$JS.ACK.stage_GRANTS.stage_chests-grants.1.2.3.4.5')).toBe(false);
    expect(allows(p.wallet.publish, '$JS.API.CONSUMER.CREATE.stage_GRANTS.stage_wallet-credit-grants.stage.grants.wallet.credit')).toBe(true);
  });
});

describe('NATS users in compose and Kubernetes', () => {
  const compose = load(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { schema: CORE_SCHEMA.withTags(mergeTag) }) as {
    services: Record<string, { command?: string[]; environment?: Record<string, string>; volumes?: string[] }>;
  };

  it('compose runs NATS with the generated users and gives each process its own', () => {
    const nats = compose.services.nats!;
    expect(nats.command).toContain('-c');
    const conf = nats.command![nats.command!.indexOf('-c') + 1]!;
    expect(nats.volumes).toContain(`\${NATS_CONF:-./deploy/nats/nats-server.conf}:${conf}:ro`);
    for (const r of NATS_ROLES) expect(nats.environment?.[passwordVariable(r)], r).toBeTruthy();
    for (const svc of [...SERVICE_ROLES, 'gateway'] as const) {
      const env = compose.services[svc]!.environment!;
      expect(env.NATS_USER, svc).toBe(svc);
      expect(env.NATS_PASSWORD, svc).toBe(nats.environment![passwordVariable(svc)]);
    }
    // The grants keeper, as the streams user (the one that may purge the stream).
    const keeper = compose.services['grants-keeper']!;
    expect(keeper.command).toEqual(['node', 'tools/admin/dist/main.js', 'keep-grants']);
    expect(keeper.environment!.NATS_USER).toBe('streams');
    expect(keeper.environment!.NATS_PASSWORD).toBe(nats.environment![passwordVariable('streams')]);
  });

  it.each(Object.keys(OVERLAYS) as Overlay[])('Kubernetes %s gives each Deployment its NATS user and password from the Secret', (overlay) => {
    for (const svc of SERVICES) {
      const c = appContainer(deployment(rendered[overlay], svc), svc);
      const pw = c.env.find((e) => e.name === 'NATS_PASSWORD');
      expect(pw?.valueFrom?.secretKeyRef.key, svc).toBe(passwordVariable(svc));
      expect(environmentOf(rendered[overlay], c).NATS_USER, svc).toBe(svc);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Against a real nats-server running the generated configuration.

const NATS_SERVER = '/usr/sbin/nats-server';
const PREFIX = `np${randomBytes(3).toString('hex')}`;
const PASSWORDS = Object.fromEntries(NATS_ROLES.map((r) => [r, `${r}-${randomBytes(8).toString('hex')}`])) as Record<NatsRole, string>;

describe.skipIf(!existsSync(NATS_SERVER))('a nats-server with the generated permissions', () => {
  let server: ChildProcess | undefined;
  let dir: string;
  let url: string;
  /** The server's log (it logs every refused publish or subscription). */
  let log = '';
  const conns: NatsConnection[] = [];
  const as = async (role: NatsRole | 'nobody', password = role === 'nobody' ? 'x' : PASSWORDS[role]) => {
    // As the processes connect (natsAuthOptions): replies in the user's own inbox.
    const nc = await connect({
      servers: url,
      user: role,
      pass: password,
      reconnect: false,
      ...(role === 'nobody' ? {} : { inboxPrefix: inboxPrefixOf(role) }),
    });
    conns.push(nc);
    return nc;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ccs-nats-perms-'));
    writeFileSync(path.join(dir, 'nats.conf'), renderServerConf(PREFIX));
    const port = await freePort();
    url = `nats://127.0.0.1:${port}`;
    const env = { ...process.env, ...Object.fromEntries(NATS_ROLES.map((r) => [passwordVariable(r), PASSWORDS[r]])) };
    server = spawn(NATS_SERVER, ['-c', path.join(dir, 'nats.conf'), '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', path.join(dir, 'js')], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    server.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await (await as('admin')).close();
        break;
      } catch (err) {
        if (Date.now() > deadline || server.exitCode !== null) throw new Error(`nats-server did not start: ${String(err)}\n${log}`, { cause: err });
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });

  afterAll(async () => {
    await Promise.all(conns.map((c) => c.close().catch(() => undefined)));
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      server.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (server.exitCode === null) server.kill('SIGKILL');
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** What the server answers a request: 'refused' (permissions violation), 'no responders', 'timeout' or 'answered'. */
  async function outcome(nc: NatsConnection, subject: string): Promise<string> {
    try {
      await nc.request(subject, new TextEncoder().encode('{}'), { timeout: 1500 });
      return 'answered';
    } catch (err) {
      const code = (err as NatsError).code;
      if (code === ErrorCode.PermissionsViolation) return 'refused';
      if (code === ErrorCode.NoResponders) return 'no responders';
      return String(code);
    }
  }

  it('refuses a wrong password', async () => {
    await expect(as('gateway', 'wrong')).rejects.toMatchObject({ code: ErrorCode.AuthorizationViolation });
  });

  it('refuses the gateway an admin subject and a grant, and lets it request a public subject', async () => {
    const gw = await as('gateway');
    expect(await outcome(gw, `${PREFIX}.players.v1.admin_create_app`)).toBe('refused');
    expect(await outcome(gw, `${PREFIX}.players.v1.admin_rotate_keys`)).toBe('refused');
    expect(await outcome(gw, `${PREFIX}.wallet.v1.debit`)).toBe('refused');
    expect(await outcome(gw, '$JS.API.INFO')).toBe('refused');
    // Allowed: nothing answers yet, and the server says so (no permission error).
    expect(await outcome(gw, `${PREFIX}.players.v1.login`)).toBe('no responders');
    // The server logs what it refused (the stack test below relies on it).
    expect(log).toMatch(new RegExp(`Publish Violation.*${PREFIX}\\.players\\.v1\\.admin_create_app`));
  });

  it('lets the admin user call admin subjects, and a service answer them', async () => {
    const players = await as('players');
    const sub = players.subscribe(`${PREFIX}.players.v1.admin_list_apps`, {
      callback: (_e, m) => m.respond(new TextEncoder().encode('{"apps":[]}')),
    });
    await players.flush();
    expect(await outcome(await as('admin'), `${PREFIX}.players.v1.admin_list_apps`)).toBe('answered');
    // Nobody else may answer a players subject.
    const wallet = await as('wallet');
    const errors: string[] = [];
    void (async () => {
      for await (const s of wallet.status()) if (s.type === 'error') errors.push(String(s.data));
    })();
    wallet.subscribe(`${PREFIX}.players.v1.admin_list_apps`);
    await wallet.flush();
    await new Promise((r) => setTimeout(r, 200));
    expect(errors.join(' ')).toMatch(/permissions.violation/i);
    sub.unsubscribe();
  });

  it('refuses a service a grant it does not produce', async () => {
    const js = (await as('wallet')).jetstream();
    await expect(js.publish(`${PREFIX}.grants.wallet.credit`, new TextEncoder().encode('{}'), { timeout: 1500 })).rejects.toMatchObject({
      code: ErrorCode.PermissionsViolation,
    });
    const chests = await as('chests');
    expect(await outcome(chests, `${PREFIX}.grants.apps.content`)).toBe('refused');
  });

  it("refuses every user another user's inbox: replies are read only by the caller", async () => {
    for (const [reader, owner] of [
      ['chests', 'gateway'],
      ['gateway', 'players'],
      ['collections', 'wallet'],
      ['admin', 'chests'],
    ] as const) {
      const nc = await as(reader);
      const errors: unknown[] = [];
      nc.subscribe(`${inboxPrefixOf(owner)}.>`, { callback: (err) => err && errors.push(err) });
      await nc.flush();
      await new Promise((r) => setTimeout(r, 200));
      expect(errors.length, `${reader} reading ${owner}'s inbox`).toBeGreaterThan(0);
      expect((errors[0] as NatsError).code, `${reader} reading ${owner}'s inbox`).toBe(ErrorCode.PermissionsViolation);
    }
    // Its own inbox, and nothing wider: the old shared `_INBOX.>` is refused too.
    const gw = await as('gateway');
    const shared = { errors: [] as unknown[] };
    gw.subscribe('_INBOX.>', { callback: (err) => err && shared.errors.push(err) });
    await gw.flush();
    await new Promise((r) => setTimeout(r, 200));
    expect((shared.errors[0] as NatsError | undefined)?.code).toBe(ErrorCode.PermissionsViolation);
  });

  it("refuses a service purging, deleting or reconfiguring the grants stream and another service's durable; the keeper may sweep", async () => {
    const stream = `${PREFIX}_GRANTS`;
    // The keeper (the streams user) creates the stream; chests creates its own durable.
    const keeperConfig = BaseConfigSchema.parse({ NATS_URL: url, NATS_PREFIX: PREFIX, NATS_USER: 'streams', NATS_PASSWORD: PASSWORDS.streams });
    await startGrantsKeeper(keeperConfig, createLogger('grants-keeper', 'silent'), { once: true });
    const chests = await as('chests');
    const own = `${PREFIX}_chests-grants`;
    await (
      await chests.jetstreamManager()
    ).consumers.add(stream, { durable_name: own, filter_subject: `${PREFIX}.grants.chests.grant`, ack_policy: AckPolicy.Explicit });
    expect(await outcome(chests, `$JS.API.CONSUMER.INFO.${stream}.${own}`)).toBe('answered');
    for (const svc of ['wallet', 'chests', 'players', 'collections'] as const) {
      const nc = await as(svc);
      for (const api of ['STREAM.PURGE', 'STREAM.DELETE', 'STREAM.UPDATE', 'STREAM.MSG.DELETE', 'CONSUMER.LIST']) {
        expect(await outcome(nc, `$JS.API.${api}.${stream}`), `${svc} ${api}`).toBe('refused');
      }
    }
    // Another service's durable: not read, pulled, deleted, re-created nor acked.
    const wallet = await as('wallet');
    for (const api of ['CONSUMER.INFO', 'CONSUMER.MSG.NEXT', 'CONSUMER.DELETE']) {
      expect(await outcome(wallet, `$JS.API.${api}.${stream}.${own}`), api).toBe('refused');
    }
    expect(await outcome(wallet, `$JS.API.CONSUMER.CREATE.${stream}.${own}.${PREFIX}.grants.chests.grant`)).toBe('refused');
    expect(await outcome(wallet, `$JS.ACK.${stream}.${own}.1.1.1.1.1`)).toBe('refused');
    // Its own durable with a wider filter: refused too (it would read every grant).
    expect(await outcome(chests, `$JS.API.CONSUMER.CREATE.${stream}.${own}.${PREFIX}.grants.>`)).toBe('refused');
    // The stream is intact.
    const info = await (await (await as('streams')).jetstreamManager()).streams.info(stream);
    expect(info.config.subjects).toEqual([`${PREFIX}.grants.>`]);
    // The keeper may purge and read message times (what its sweep does).
    const keeper = await as('streams');
    expect(await outcome(keeper, `$JS.API.STREAM.PURGE.${stream}`)).toBe('answered');
    expect(await outcome(keeper, `$JS.API.STREAM.DELETE.${stream}`)).toBe('refused');
    expect(await outcome(keeper, `$JS.API.CONSUMER.MSG.NEXT.${stream}.${own}`)).toBe('refused');
  });

  describe('the whole stack, each process with its own user', () => {
    let services: RunningService<BaseConfig>[] = [];
    let gateway: RunningGateway | undefined;
    let dropDb: (() => Promise<void>) | undefined;
    let logFrom = 0;
    const apiKey = `demo_${randomBytes(16).toString('hex')}`;

    beforeAll(async () => {
      // The violations the tests above provoked are logged by now; only the stack's count from here.
      await new Promise((r) => setTimeout(r, 500));
      logFrom = log.length;
      const infra = await testInfra();
      const db = await createTestDatabase(infra);
      dropDb = db.drop;
      const env = (role: NatsRole) => ({
        DATABASE_URL: db.url,
        NATS_URL: url,
        REDIS_URL: infra.redisUrl,
        NATS_PREFIX: PREFIX,
        REDIS_PREFIX: `${PREFIX}:`,
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
        CHESTS_DEMO_API_KEY: apiKey,
        RATE_LIMIT: 'off',
        ARGON2_MEMORY_KIB: '1024',
        ARGON2_TIME_COST: '1',
        PG_POOL_MAX: '3',
        NATS_USER: role,
        NATS_PASSWORD: PASSWORDS[role],
      });
      // The store trusts the test certificate authority that signs the purchase below.
      const extra: Partial<Record<NatsRole, Record<string, string>>> = { store: { STORE_APPLE_ROOT_CERTS: (await applePki()).rootPem } };
      const start = (def: shared.ServiceDefinition<any>, schema: { parse(v: unknown): unknown }, role: NatsRole) =>
        startService(
          def,
          schema.parse({ ...env(role), ...extra[role] }) as BaseConfig,
          createLogger(role, process.env.TEST_LOG_LEVEL === undefined ? 'silent' : (process.env.TEST_LOG_LEVEL as 'info')),
        );
      services.push(await start(playersService, PlayersConfigSchema, 'players'));
      services.push(
        ...(await Promise.all([
          start(walletService, WalletConfigSchema, 'wallet'),
          start(chestsService, ChestsConfigSchema, 'chests'),
          start(collectionsService, CollectionsConfigSchema, 'collections'),
          start(egressService, EgressConfigSchema, 'egress'),
          start(storeService, StoreConfigSchema, 'store'),
        ])),
      );
      gateway = await startGateway(GatewayConfigSchema.parse({ ...env('gateway'), PORT: '0', HOST: '127.0.0.1' }), createLogger('gateway', 'silent'));
    }, 60_000);

    afterAll(async () => {
      await gateway?.close();
      await Promise.all(services.map((s) => s.stop()));
      services = [];
      await dropDb?.();
    }, 60_000);

    const http = async (method: string, p: string, body?: unknown, token?: string, contentType?: string) => {
      const headers = { ...jsonApiHeaders(apiKey, token), ...(contentType ? { 'content-type': contentType } : {}) };
      const res = await fetch(`${gateway!.url}${p}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
    };

    it('is ready, registers a player with its welcome grants, credits and opens a chest', async () => {
      expect((await fetch(`${gateway!.url}/readyz`)).status).toBe(200);
      const password = 'Str0ng!pass';
      const reg = await http('POST', '/api/v1/players/register', {
        data: {
          type: 'player',
          // An adult: the demo content's CN rule pack refuses store payments to a player of unknown age.
          attributes: { email: `p-${randomBytes(4).toString('hex')}@example.com`, password, password_confirmation: password, birth_year: 1990 },
          relationships: {},
        },
      });
      expect(reg.status, JSON.stringify(reg.body)).toBe(201);
      const token: string = reg.body.meta.access_token;
      const currencies = await http('GET', '/api/v1/currencies', undefined, token);
      expect(currencies.status).toBe(200);
      const coins = currencies.body.data.find((c: { attributes: { code: string } }) => c.attributes.code === 'coins');
      expect(Number(coins.attributes.balance.amount)).toBeGreaterThan(0); // the registration grant, applied by wallet
      const credit = await http('POST', `/api/v1/currencies/${coins.id}/credit`, { amount: '1.00' }, token, 'application/json');
      expect(credit.status, JSON.stringify(credit.body)).toBeLessThan(300);
      // The starter chest reaches chests through JetStream (a grant players produced).
      const open = await eventually(async () => {
        const r = await http('POST', `/api/v1/chests/${reg.body.meta.welcome_bonus.starter_chest}/open`, undefined, token);
        if (r.status === 404) throw new Error('starter chest not granted yet');
        return r;
      });
      expect(open.status, JSON.stringify(open.body)).toBe(200);
      // The grants keeper sweeps what every consumer acknowledged, under its own user.
      const keeperConfig = BaseConfigSchema.parse({
        NATS_URL: url,
        NATS_PREFIX: PREFIX,
        NATS_USER: 'streams',
        NATS_PASSWORD: PASSWORDS.streams,
        GRANTS_KEEP_ACKED_HOURS: '0',
      });
      const swept = await eventually(async () => {
        const r = await startGrantsKeeper(keeperConfig, createLogger('grants-keeper', 'silent'), { once: true });
        if (!r.swept) throw new Error('nothing acknowledged by every consumer yet');
        return r.swept;
      });
      expect(swept).toBeGreaterThan(0);
      // Nothing the stack did was refused (the server logs every violation).
      expect(log.slice(logFrom)).not.toMatch(/violation/i);
    }, 30_000);

    it('grants an App Store purchase through the store, under its own user: credits and chests through the stream, the balances asked of the wallet', async () => {
      const password = 'Str0ng!pass';
      const reg = await http('POST', '/api/v1/players/register', {
        data: {
          type: 'player',
          // An adult: the demo content's CN rule pack refuses store payments to a player of unknown age.
          attributes: { email: `p-${randomBytes(4).toString('hex')}@example.com`, password, password_confirmation: password, birth_year: 1990 },
          relationships: {},
        },
      });
      expect(reg.status, JSON.stringify(reg.body)).toBe(201);
      const signed = await (await applePki()).signTransaction({ productId: 'com.example.chests.starter_pack', appAccountToken: reg.body.data.id });
      const body = { data: { type: 'store_purchase', attributes: { platform: 'apple', signed_transaction: signed } } };
      // Until the store has applied the demo content (its own durable), it answers 409 store_not_configured.
      const bought = await eventually(async () => {
        const r = await http('POST', '/api/v1/players/me/store/purchases', body, reg.body.meta.access_token);
        if (r.status === 409) throw new Error(JSON.stringify(r.body));
        return r;
      });
      expect(bought.status, JSON.stringify(bought.body)).toBe(201);
      expect(bought.body.meta.grants.chests.length).toBeGreaterThan(0);
      // The wallet applies the purchase's credits from the stream: 50 gems on top of the 15 of the welcome grants.
      await eventually(async () => {
        const currencies = await http('GET', '/api/v1/currencies', undefined, reg.body.meta.access_token);
        const gems = currencies.body.data.find((c: { attributes: { code: string } }) => c.attributes.code === 'gems');
        expect(Number(gems.attributes.balance.amount)).toBe(65);
      });
      // Nothing was refused: neither the store's grants and its balances request, nor the consumers.
      expect(log.slice(logFrom)).not.toMatch(/violation/i);
    }, 30_000);
  });
});
