/**
 * The cluster's hosts for the partition drills (`CLUSTER_PARTITIONS=1 npm run chaos -- --cluster`,
 * scripts/cluster/drill/partition-faults.ts): the three Patroni nodes, the three NATS servers
 * and one replica each in a network namespace of its own (./lab.ts); etcd on an address of this
 * namespace of its own, so that a node can be cut from etcd while HAProxy (on the gateway
 * address) still reaches it. Everything else (etcd, HAProxy, PgBouncer, the other replicas, the
 * drill) stays here. A namespaced replica reaches PgBouncer and Redis, which listen on 127.0.0.1
 * here, through relays on the gateway address, and the NATS servers at their own addresses.
 */
import type { PatroniNet } from '../patroni-config.js';
import { NetLab, type NetHost } from './lab.js';
import { startRelay, type Relay } from './relay.js';

/** The replicas that run in namespaces: the one the replica partition cuts off from NATS. */
export const NAMESPACED_REPLICAS = ['chests-2'];

export class ClusterNet {
  readonly etcdHost: string;
  readonly pg: NetHost[];
  readonly nats: NetHost[];
  readonly replicas = new Map<string, NetHost>();
  private readonly relays: Relay[] = [];

  private constructor(readonly lab: NetLab) {
    this.etcdHost = lab.addLocalAddress();
    this.pg = ['pg1', 'pg2', 'pg3'].map((n) => lab.addHost(n));
    this.nats = ['n1', 'n2', 'n3'].map((n) => lab.addHost(n));
    for (const r of NAMESPACED_REPLICAS) this.replicas.set(r, lab.addHost(r));
  }

  /** What the Patroni topology needs to know (scripts/cluster/patroni.ts). */
  get patroni(): PatroniNet {
    return { etcdHost: this.etcdHost, hosts: this.pg };
  }

  /** A lab with every host; its removal is `destroy` (and this process' exit). */
  static create(): ClusterNet {
    const lab = NetLab.create();
    try {
      return new ClusterNet(lab);
    } catch (err) {
      lab.destroy();
      throw err;
    }
  }

  /** `envOf` with the namespaced replicas' settings through relays (see replicaEnv). */
  async withRelays<N extends string>(envOf: (name: N, i: number) => NodeJS.ProcessEnv): Promise<(name: N, i: number) => NodeJS.ProcessEnv> {
    const relayed = new Map<string, NodeJS.ProcessEnv>();
    for (const label of this.replicas.keys()) {
      const [name, n] = label.split('-') as [N, string];
      relayed.set(label, await this.replicaEnv(envOf(name, Number(n) - 1)));
    }
    return (name, i) => relayed.get(`${name}-${i + 1}`) ?? envOf(name, i);
  }

  /**
   * A namespaced replica's settings: DATABASE_URL and REDIS_URL through relays on the gateway
   * address (the same relay for every replica using the same server).
   */
  async replicaEnv(env: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
    const out = { ...env };
    for (const key of ['DATABASE_URL', 'REDIS_URL'] as const) {
      const v = env[key];
      if (!v) continue;
      const url = new URL(v);
      const port = Number(url.port) || (key === 'REDIS_URL' ? 6379 : 5432);
      let relay = this.relays.find((r) => r.port === port);
      relay ??= await startRelay({ host: this.lab.gateway, port }, { host: url.hostname, port });
      if (!this.relays.includes(relay)) this.relays.push(relay);
      url.hostname = this.lab.gateway;
      out[key] = url.toString();
    }
    return out;
  }

  /** The relays closed, the namespaces, veths and bridge removed (every process in them must be gone). */
  async destroy(): Promise<void> {
    await Promise.all(this.relays.map((r) => r.close()));
    this.lab.destroy();
  }
}
