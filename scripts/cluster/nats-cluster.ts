/**
 * Three nats-server processes in one JetStream cluster on loopback, as production runs three
 * (deploy/nats/values-production.yaml): each its own client port, route port, monitoring port
 * and store directory under `dir`; server names n1..n3.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { IP, type NetHost } from './netns/lab.js';
import { freePorts, startProgram, waitFor, type Child } from './processes.js';

export const NATS_SERVER = process.env.NATS_SERVER_BIN || '/usr/sbin/nats-server';
export const CLUSTER_NAME = 'ccs-local';

export interface NatsNode {
  name: string;
  /** Its address: 127.0.0.1, or its own in a network namespace (`netns`, the partition drills). */
  host: string;
  netns?: string;
  /** Client port (nats://127.0.0.1:port). */
  port: number;
  /** Cluster route port. */
  routePort: number;
  /** HTTP monitoring port (/varz, /jsz). */
  monitorPort: number;
  storeDir: string;
  configFile: string;
}

/** The servers' ports and files; nothing started yet. */
export async function planNatsCluster(dir: string, size = 3, hosts?: NetHost[]): Promise<NatsNode[]> {
  const ports = await freePorts(size * 3);
  const nodes = Array.from({ length: size }, (_, i) => ({
    name: `n${i + 1}`,
    host: hosts?.[i]?.address ?? '127.0.0.1',
    netns: hosts?.[i]?.ns,
    port: ports[i * 3]!,
    routePort: ports[i * 3 + 1]!,
    monitorPort: ports[i * 3 + 2]!,
    storeDir: path.join(dir, `n${i + 1}`, 'jetstream'),
    configFile: path.join(dir, `n${i + 1}`, 'nats.conf'),
  }));
  for (const n of nodes) {
    mkdirSync(n.storeDir, { recursive: true });
    writeFileSync(n.configFile, natsConfig(n, nodes));
  }
  return nodes;
}

/** One server's configuration: routes to every server of the cluster (its own is ignored). */
export function natsConfig(node: NatsNode, all: NatsNode[]): string {
  return [
    `server_name: ${node.name}`,
    `listen: ${node.host}:${node.port}`,
    `http: ${node.host}:${node.monitorPort}`,
    // A graceful stop (SIGUSR2, `nats-server --signal ldm`): leaderships move first, clients leave over 30 s (its minimum).
    'lame_duck_duration: "30s"',
    'lame_duck_grace_period: "1s"',
    'jetstream {',
    `  store_dir: ${JSON.stringify(node.storeDir)}`,
    '  max_memory_store: 256MB',
    '  max_file_store: 2GB',
    '}',
    'cluster {',
    `  name: ${CLUSTER_NAME}`,
    `  listen: ${node.host}:${node.routePort}`,
    '  routes: [',
    ...all.filter((o) => o !== node).map((o) => `    nats-route://${o.host}:${o.routePort}`),
    '  ]',
    '}',
    '',
  ].join('\n');
}

export const natsUrlOf = (nodes: NatsNode[]) => nodes.map((n) => `nats://${n.host}:${n.port}`).join(',');

/** Starts one server of the plan (again, after a kill: its store directory is kept). */
export function startNatsNode(node: NatsNode, print: (line: string) => void): Child {
  if (node.netns) return startProgram(node.name, IP, ['netns', 'exec', node.netns, NATS_SERVER, '-c', node.configFile], print);
  return startProgram(node.name, NATS_SERVER, ['-c', node.configFile], print);
}

interface Jsz {
  meta_cluster?: { name?: string; leader?: string; cluster_size?: number };
}

/** The JetStream meta leader as one server's monitoring port sees it ('' when none yet). */
export async function metaLeader(node: NatsNode): Promise<string> {
  const res = await fetch(`http://${node.host}:${node.monitorPort}/jsz`, { signal: AbortSignal.timeout(2000) });
  const body = (await res.json()) as Jsz;
  return body.meta_cluster?.leader ?? '';
}

/** Waits until every running server names the same meta leader; returns its name. */
export async function waitForMetaLeader(nodes: NatsNode[], timeoutMs: number, dead?: () => string | undefined): Promise<string> {
  return waitFor(
    'the NATS cluster elects a JetStream meta leader',
    async () => {
      const leaders = await Promise.all(nodes.map(metaLeader));
      return leaders[0] && leaders.every((l) => l === leaders[0]) ? leaders[0] : undefined;
    },
    { timeoutMs, everyMs: 300, dead },
  );
}
