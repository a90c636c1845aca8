import type { Load } from './load.js';
import { startReplica, type Replica, type ReplicaExit } from './replica.js';

/** One replica's graceful stop during a roll, in the load's clock. */
export interface Stop extends ReplicaExit {
  label: string;
  /** How long SIGTERM → exit took. */
  ms: number;
  signalledAt: number;
  exitedAt: number;
  output: string;
}

/** Starts `count` replicas of a service and waits until each is ready. */
export async function startReplicas(service: string, env: Record<string, string>, count: number, first = 1): Promise<Replica[]> {
  const replicas = await Promise.all(Array.from({ length: count }, (_, i) => startReplica(service, env, `${service}#${first + i}`)));
  await Promise.all(replicas.map((r) => r.waitReady()));
  return replicas;
}

/**
 * A rolling restart while `load` runs: for each replica in turn, SIGTERM it and wait for its
 * exit, then start a replacement and wait until it is ready, then let the load run `settleMs`
 * before the next one. Returns each stop and the replicas now running.
 */
export async function rollingRestart(
  service: string,
  env: Record<string, string>,
  replicas: Replica[],
  load: Load,
  settleMs = 500,
): Promise<{ stops: Stop[]; running: Replica[] }> {
  const stops: Stop[] = [];
  const running: Replica[] = [];
  let next = replicas.length + 1;
  for (const old of replicas) {
    const signalledAt = load.now();
    const exit = await old.terminate();
    stops.push({ label: old.label, ...exit, signalledAt, exitedAt: load.now(), output: old.output() });
    const fresh = await startReplica(service, env, `${service}#${next++}`);
    running.push(fresh);
    await fresh.waitReady();
    await new Promise((r) => setTimeout(r, settleMs));
  }
  return { stops, running };
}
