/**
 * Starts the bench's stack as `npm start` does (players first, then wallet, chests, collections,
 * egress, store, gateway), each service a separate process, next to the floor processes.
 */
import { freePort } from '@ccs/shared/testing';
import { waitForGateway, waitForServiceHealth } from '../scripts/start/wait-ready.js';
import { FLOORS, type FloorKind } from './scenarios.js';
import type { BenchSession, Log } from './session.js';
import { spawnTs, waitFor } from './stack-process.js';
import { asRole } from './statements.js';
import { applePki, type ApplePki } from '../test/support/store/apple-pki.js';

/** The saga floor's consumers (bench/floor-consumer.ts): their durables are `saga_<name>` on the floor's stream. */
export const SAGA_CONSUMERS = ['items', 'experience'] as const;

/** The running stack: the services' environment and the gateway's and floors' addresses. */
export interface Stack {
  env: Record<string, string>;
  base: string;
  floorBase: string;
  /** The database URL a process connects with (with BENCH_STATEMENTS, as its own role). */
  dbUrl(role: string): string;
  /** The certificate authority the store trusts (STORE_APPLE_ROOT_CERTS): the App Store purchases' signer. */
  pki: ApplePki;
}

export async function startStack(
  session: BenchSession,
  o: { floorKinds: FloorKind[]; argon2: { memoryKib: number; timeCost: number }; started: number; log: Log },
): Promise<Stack> {
  const { infra, prefix, procs } = session;
  const db = session.db!;
  // With BENCH_STATEMENTS each process connects as its own role, so each statement has an owner.
  const dbUrl = (role: string) => (session.cluster ? asRole(db.url, role) : db.url);
  const [port, floorPort] = [await freePort(), await freePort()];
  // App Store transactions are signed by a certificate authority of the bench's own, which the store trusts as tests do.
  const pki = await applePki();
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    NATS_URL: infra.natsUrl,
    REDIS_URL: infra.redisUrl,
    NATS_PREFIX: prefix,
    REDIS_PREFIX: `${prefix}:`,
    RATE_LIMIT: 'off',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    PORT: String(port),
    // As npm start: no per-service health port (the gateway's /readyz covers every service).
    HEALTH_PORT: '0',
    // Registration measures the saga, not the password hash: the cheapest settings accepted.
    ARGON2_MEMORY_KIB: String(o.argon2.memoryKib),
    ARGON2_TIME_COST: String(o.argon2.timeCost),
    STORE_APPLE_ROOT_CERTS: pki.rootPem,
  };
  const stack: Stack = { env, base: `http://127.0.0.1:${port}`, floorBase: `http://127.0.0.1:${floorPort}`, dbUrl, pki };

  o.log(`database ${new URL(db.url).pathname.slice(1)}, NATS prefix ${prefix}, Redis prefix ${prefix}:`);
  o.log('starting the stack as npm start does (players first, then wallet, chests, collections, egress, store, gateway) ...');
  if (o.floorKinds.length) {
    procs.push(spawnTs('bench/floor-responder.ts', { ...env, DATABASE_URL: dbUrl('bench_floor') }, 'floor responder'));
    procs.push(spawnTs('bench/floor-server.ts', { ...env, PORT: String(floorPort) }, 'floor front'));
  }
  // The saga floor's two consumers, each in a process of its own as collections and players are.
  if (o.floorKinds.some((k) => FLOORS[k].drains))
    for (const c of SAGA_CONSUMERS)
      procs.push(spawnTs('bench/floor-consumer.ts', { ...env, DATABASE_URL: dbUrl('bench_floor'), SAGA_CONSUMER: c }, `saga ${c}`));
  procs.push(spawnTs('services/players/src/main.ts', { ...env, DATABASE_URL: dbUrl('players') }, 'players'));
  const aborted = () => session.dead() !== undefined;
  const deadError = (err: unknown) => {
    const d = session.dead();
    return d ? new Error(`${d.label} stopped while the stack started (${d.unexpectedExit}); its output is above`) : err;
  };
  await waitForServiceHealth({ natsUrl: infra.natsUrl, prefix, service: 'players', timeoutMs: 120_000, aborted }).catch((err) => {
    throw deadError(err);
  });
  for (const s of ['wallet', 'chests', 'collections', 'egress', 'store', 'gateway'])
    procs.push(spawnTs(`services/${s}/src/main.ts`, { ...env, DATABASE_URL: dbUrl(s) }, s));
  await waitForGateway({ url: stack.base, timeoutMs: 120_000, aborted, progress: o.log }).catch((err) => {
    throw deadError(err);
  });
  for (const k of o.floorKinds) await waitFor(`${stack.floorBase}${FLOORS[k].path}`, 30_000, FLOORS[k].name);
  o.log(`stack ready (${Math.round((Date.now() - o.started) / 1000)} s)`);
  return stack;
}

/** A second replica of chests and of collections (same environment, own health port), ready. */
export async function startReplicas(session: BenchSession, stack: Stack): Promise<void> {
  for (const s of ['chests', 'collections']) {
    const healthPort = await freePort();
    session.procs.push(
      spawnTs(`services/${s}/src/main.ts`, { ...stack.env, DATABASE_URL: stack.dbUrl(s), HEALTH_PORT: String(healthPort) }, `${s}#2`),
    );
    await waitFor(`http://127.0.0.1:${healthPort}/readyz`, 120_000, `the second ${s} replica`);
  }
}
