/**
 * Acting on a running cluster (scripts/cluster/cluster.ts): when a child is ready again, a
 * rolling restart's step (SIGTERM, exit, start, ready), and the grants stream's leader.
 */
import { connect, RequestStrategy } from 'nats';
import { grantsStream } from '../../packages/shared/src/messaging/stream.js';
import { natsUrlOf, type NatsNode } from './nats-cluster.js';
import { waitForPgbouncer, type Bouncer } from './postgres.js';
import { sleep, waitFor, type Ended } from './processes.js';
import type { Supervisor } from './supervisor.js';

export interface Replaced {
  name: string;
  exit: Ended;
  /** From SIGTERM to the exit. */
  stopMs: number;
  /** From the start again to ready. */
  readyMs: number;
}

/** What the readiness checks read of the cluster. */
export interface Parts {
  natsUrl: string;
  nodes: NatsNode[];
  gatewayUrls: string[];
  bouncer: Bouncer;
}

/** The name of the server leading the grants stream's Raft group. */
export async function grantsLeaderOf(natsUrl: string, timeoutMs = 30_000): Promise<string> {
  // Asked again until the deadline: on a loaded machine one stream-info request can time out.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const c = await connect({ servers: natsUrl, name: 'cluster-launcher' });
      try {
        const info = await (await c.jetstreamManager({ timeout: 2_000 })).streams.info(grantsStream(''));
        return info.cluster?.leader ?? '';
      } finally {
        await c.close().catch(() => undefined);
      }
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}

/** Polls the grants stream's leader through the servers other than `not` until one other than `not` is named. */
export async function waitForGrantsLeaderOf(nodes: NatsNode[], not: string | undefined, timeoutMs: number): Promise<string> {
  const c = await connect({ servers: natsUrlOf(nodes.filter((n) => n.name !== not)), name: 'cluster-launcher', maxReconnectAttempts: -1 });
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // The manager itself asks the server (account info): made anew each time, failures tolerated.
      const leader = await c
        .jetstreamManager({ timeout: 1_000 })
        .then((jsm) => jsm.streams.info(grantsStream('')))
        .then((i) => i.cluster?.leader ?? '')
        .catch(() => '');
      if (leader && leader !== not) return leader;
      if (Date.now() > deadline) throw new Error(`the grants stream names no leader${not ? ` other than ${not}` : ''} within ${timeoutMs / 1000} s`);
      await sleep(50);
    }
  } finally {
    await c.close().catch(() => undefined);
  }
}

/** The readiness of one child of the cluster (see Cluster.ready). */
function readyCheck(sup: Supervisor, o: Parts, name: string): () => Promise<true | undefined> {
  const child = sup.children.get(name);
  if (!child) throw new Error(`no child named ${name}`);
  const node = o.nodes.find((n) => n.name === name);
  if (node) {
    return async () => {
      const res = await fetch(`http://${node.host}:${node.monitorPort}/healthz`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    };
  }
  if (name === 'pgbouncer') return async () => (await waitForPgbouncer(o.bouncer, child, 60_000), true);
  const m = /^(\w+)-(\d+)$/.exec(name);
  if (!m) throw new Error(`cannot tell when ${name} is ready`);
  const service = m[1]!;
  if (service === 'gateway') {
    const url = o.gatewayUrls[Number(m[2]) - 1]!;
    return async () => {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    };
  }
  return async () => {
    // Every replica of the service that runs answers the service API's PING.
    const running = [...sup.children.values()].filter((c) => c.name.startsWith(`${service}-`) && !c.hasExited()).length;
    const nc = await connect({ servers: o.natsUrl, name: 'cluster-launcher' });
    try {
      const svc = nc.services.client({ strategy: RequestStrategy.Count, maxMessages: running, maxWait: 1000 });
      let n = 0;
      for await (const _ of await svc.ping(service)) n += 1;
      return n >= running ? true : undefined;
    } finally {
      await nc.close().catch(() => undefined);
    }
  };
}

/** Waits until the child `name` is ready (Cluster.ready); the milliseconds it waited. */
export async function readyOf(sup: Supervisor, o: Parts, name: string, timeoutMs: number): Promise<number> {
  const t = Date.now();
  const check = readyCheck(sup, o, name);
  const child = sup.children.get(name)!;
  await waitFor(`${name} is ready`, check, {
    timeoutMs,
    everyMs: 100,
    dead: () => (child.hasExited() ? `${name} exited: ${child.tail().slice(-4).join(' / ')}` : undefined),
  });
  return Date.now() - t;
}

/** SIGTERM, wait for the exit (bounded), start it again, wait until ready (Cluster.replace). */
export async function replaceChild(
  sup: Supervisor,
  name: string,
  ready: (name: string, timeoutMs: number) => Promise<number>,
  opts: { stopTimeoutMs?: number; readyTimeoutMs?: number },
): Promise<Replaced> {
  const c = sup.children.get(name);
  const make = sup.relaunch.get(name);
  if (!c || !make || c.hasExited()) throw new Error(`${name} is not running`);
  const bound = opts.stopTimeoutMs ?? 30_000;
  const t = Date.now();
  sup.expected.add(name);
  c.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${name} did not exit within ${bound / 1000} s of SIGTERM`)), bound)),
  );
  const exit = await Promise.race([c.exited, late]).finally(() => clearTimeout(timer));
  const stopMs = Date.now() - t;
  sup.launch(name, make);
  const readyMs = await ready(name, opts.readyTimeoutMs ?? 60_000);
  return { name, exit, stopMs, readyMs };
}
