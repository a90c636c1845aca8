/**
 * The drill's faults (scripts/cluster/drill/), each run during a burst (Drill.duringBurst) or, for
 * the rolling restart, under a steady load of its own. Every killed process is started again at
 * once, as Kubernetes restarts a container, and ready before the scenario ends.
 */
import { SERVICES_ORDER, type Replaced } from '../cluster.js';
import { metaLeader } from '../nats-cluster.js';
import { sleep } from '../processes.js';
import { burst, ROLLING, rollingLoad } from './load.js';
import type { Drill, DrillScenario } from './index.js';

const at = (t: number, started: number) => `${((t - started) / 1000).toFixed(1)} s`;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * A NATS server that does not lead the grants stream (the JetStream meta leader when that is
 * another server), and with it `replica` when named, get SIGKILL; both start again at once (the
 * replica while the servers elect a meta leader).
 */
export function natsServerKilled(d: Drill, replica?: string): Promise<DrillScenario> {
  const { cluster } = d;
  const name = `non-leader NATS server${replica ? ` + ${replica}` : ''} killed`;
  return d.duringBurst(name, async () => {
    const leader = await cluster.grantsLeader();
    const meta = await metaLeader(cluster.natsNodes.find((n) => n.name !== leader)!).catch(() => '');
    const victim = meta && meta !== leader ? meta : cluster.natsNodes.map((n) => n.name).find((n) => n !== leader)!;
    const victims = replica ? [victim, replica] : [victim];
    return {
      async strike(started) {
        const note = `${victim}${victim === meta ? ' (JetStream meta leader)' : ''} (grants leader ${leader})${replica ? ` and ${replica}` : ''} killed at ${at(Date.now(), started)}`;
        await Promise.all(victims.map((v) => cluster.kill(v)));
        for (const v of victims) cluster.restart(v);
        return { note };
      },
      async recover() {
        const back = await Promise.all(victims.map((v) => cluster.ready(v)));
        return `started again at once, ready ${back.map((ms) => (ms / 1000).toFixed(1)).join(' s / ')} s after the burst`;
      },
    };
  });
}

/** The NATS server leading the grants stream gets SIGKILL; the time until another leads it is measured. */
export function grantsLeaderKilled(d: Drill): Promise<DrillScenario> {
  const { cluster } = d;
  return d.duringBurst('grants leader NATS server killed', async () => {
    const leader = await cluster.grantsLeader();
    return {
      async strike(started) {
        const t = Date.now();
        await cluster.kill(leader);
        const now = await cluster.waitForGrantsLeader({ not: leader, timeoutMs: 30_000 });
        const leaderlessMs = Date.now() - t;
        return { leaderlessMs, note: `leader ${leader} killed at ${at(t, started)}, ${now} leads after ${(leaderlessMs / 1000).toFixed(2)} s` };
      },
      async recover() {
        cluster.restart(leader);
        return `${leader} back and current ${secs(await cluster.ready(leader))} after`;
      },
    };
  });
}

/** PgBouncer gets SIGKILL and starts again on its port `downMs` later (a Postgres restart as the services see it). */
export function pgbouncerKilled(d: Drill, downMs: number): Promise<DrillScenario> {
  const { cluster } = d;
  return d.duringBurst(`PgBouncer killed, back after ${downMs / 1000} s`, async () => ({
    async strike(started) {
      const t = Date.now();
      await cluster.kill('pgbouncer');
      await sleep(downMs);
      cluster.restart('pgbouncer');
      const gap = await cluster.ready('pgbouncer');
      return {
        note: `PgBouncer killed at ${at(t, started)}, answering again ${((Date.now() - t) / 1000).toFixed(2)} s later (ready wait ${gap} ms)`,
      };
    },
  }));
}

/** One replica of a backend service gets SIGKILL and starts again at once. */
export function replicaKilled(d: Drill, replica: string): Promise<DrillScenario> {
  const { cluster } = d;
  return d.duringBurst(`${replica} killed`, async () => ({
    async strike(started) {
      const note = `${replica} killed at ${at(Date.now(), started)}`;
      await cluster.kill(replica);
      cluster.restart(replica);
      return { note };
    },
    recover: async () => `started again at once, ready ${secs(await cluster.ready(replica))} after the burst`,
  }));
}

/**
 * A gateway gets SIGKILL with requests in flight, and starts again at once. Its open connections
 * break: a client sees those (connection failed) and they are counted. The drill's load balancer
 * takes it out of rotation once it is dead (a real one's health check takes seconds longer, each
 * request in them refused too) and back once its /readyz is 200. A broken connection no server can
 * prevent: the scenario holds with those (and only those) if nothing is lost or duplicated; the
 * keyed ones and the reads are sent again through the other gateway, the unkeyed writes are not.
 */
export function gatewayKilled(d: Drill, replica: string): Promise<DrillScenario> {
  const { cluster, client } = d;
  const url = cluster.gatewayUrls[Number(replica.split('-')[1]) - 1]!;
  return d.duringBurst(`${replica} killed`, async () => ({
    tolerated: { why: `connections to the killed ${replica} broken`, is: (a) => a.status === 0 && a.via === url },
    async strike(started) {
      const note = `${replica} killed at ${at(Date.now(), started)}`;
      await cluster.kill(replica);
      client.outOfRotation.add(url);
      cluster.restart(replica);
      return { note };
    },
    async recover() {
      const ms = await cluster.ready(replica);
      client.outOfRotation.delete(url);
      return `started again at once, ready (back in rotation) ${secs(ms)} after the burst`;
    },
  }));
}

/** Postgres itself restarted (`pg_ctl restart -m <mode>`) behind PgBouncer. */
export function postgresRestarted(
  d: Drill,
  postgres: { restart(mode: 'fast' | 'immediate'): Promise<void> },
  mode: 'fast' | 'immediate',
): Promise<DrillScenario> {
  return d.duringBurst(`Postgres restarted (-m ${mode}) behind PgBouncer`, async () => ({
    async strike(started) {
      const t = Date.now();
      await postgres.restart(mode);
      return { note: `pg_ctl restart -m ${mode} at ${at(t, started)}, accepting connections again ${((Date.now() - t) / 1000).toFixed(2)} s later` };
    },
  }));
}

/** Every replica of every service in turn: SIGTERM, wait for the exit, start, ready; a gateway leaves the rotation first. */
async function replaceAll(d: Drill): Promise<Replaced[]> {
  const { cluster, client } = d;
  const replaced: Replaced[] = [];
  for (const service of SERVICES_ORDER) {
    for (const name of cluster.names().filter((n) => n.startsWith(`${service}-`))) {
      const url = service === 'gateway' ? cluster.gatewayUrls[Number(name.split('-')[1]) - 1]! : undefined;
      if (url) {
        // The load balancer stops sending to it first (Kubernetes: preStop pause, endpoints removed).
        client.outOfRotation.add(url);
        await sleep(200);
      }
      replaced.push(await cluster.replace(name));
      if (url) client.outOfRotation.delete(url);
    }
  }
  return replaced;
}

/**
 * A rolling restart of all seven services, one replica at a time, under a steady load (ROLLING)
 * that also reads, from its 20th answer until a second after the last replica is ready. An
 * unclean exit (not 0 after SIGTERM) counts against the scenario.
 */
export async function rollingRestart(d: Drill): Promise<{ scenario: DrillScenario; replaced: Replaced[]; unclean: string[] }> {
  const exitsBefore = d.cluster.unexpectedExits.length;
  const players = await d.client.playersWithChests(ROLLING.players, ROLLING.chests);
  const load = rollingLoad(players);
  const progress = { done: 0 };
  const started = Date.now();
  let replaced: Replaced[] = [];
  const restarts = (async () => {
    try {
      while (progress.done < 20) await sleep(20);
      replaced = await replaceAll(d);
      await sleep(1000);
    } finally {
      load.stop();
    }
  })();
  const done = await burst(d.client, load.take, { inFlight: ROLLING.inFlight, pauseMs: ROLLING.pauseMs, progress });
  await restarts;
  const seconds = (Date.now() - started) / 1000;
  const unclean = replaced.filter((r) => r.exit.code !== 0).map((r) => `${r.name} ${r.exit.signal ?? `exit ${r.exit.code}`}`);
  const range = (ms: number[]) => `${(Math.min(...ms) / 1000).toFixed(1)}–${(Math.max(...ms) / 1000).toFixed(1)} s`;
  const note = `${replaced.length} replicas replaced one at a time, each drained in ${range(replaced.map((r) => r.stopMs))} and ready in ${range(replaced.map((r) => r.readyMs))}; unclean exits: ${unclean.join(', ') || 'none'}`;
  const scenario = d.record(
    { name: 'rolling restart of all seven services', players, done, note },
    seconds,
    exitsBefore,
    unclean.map((u) => `unclean exit after SIGTERM: ${u}`),
  );
  return { scenario, replaced, unclean };
}
