/** The children of a cluster (scripts/cluster/cluster.ts), and the clean-up of its Redis keys. */
import { Redis } from 'ioredis';
import { SCHEMA_OWNERS } from './postgres.js';
import { stopChild, type Child } from './processes.js';

const STOP_GRACE_MS = 15_000;

/** The children of one cluster: started, watched (an exit nobody asked for is reported), stopped. */
export class Supervisor {
  readonly children = new Map<string, Child>();
  readonly relaunch = new Map<string, () => Child>();
  readonly expected = new Set<string>();
  readonly unexpectedExits: string[] = [];
  stopping = false;

  constructor(private readonly say: (line: string) => void) {}

  watch(c: Child): Child {
    this.children.set(c.name, c);
    void c.exited.then((e) => {
      if (this.stopping || this.expected.has(c.name) || this.children.get(c.name) !== c) return;
      const line = `${c.name} exited (${e.signal ? `signal ${e.signal}` : `exit code ${e.code}`})`;
      // Its last lines say why: they go into the failure message of whoever checks unexpectedExits.
      this.unexpectedExits.push(`${line}: ${c.tail().slice(-8).join(' / ')}`);
      this.say(`${line}; the cluster runs on without it; its last lines:\n  ${c.tail().slice(-12).join('\n  ')}`);
    });
    return c;
  }

  /** Starts a child that can be killed and started again by name. */
  launch(name: string, make: () => Child): Child {
    this.relaunch.set(name, make);
    this.expected.delete(name);
    return this.watch(make());
  }

  /** Why the start cannot go on (a child died), or undefined. */
  readonly dead = (): string | undefined => {
    for (const c of this.children.values())
      if (c.hasExited() && !this.expected.has(c.name)) return `${c.name} exited: ${c.tail().slice(-6).join(' / ')}`;
    return undefined;
  };

  /** Gateways, then services, then PgBouncer, then the NATS servers. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    const all = [...this.children.values()];
    const groups = [
      all.filter((c) => c.name.startsWith('gateway')),
      all.filter((c) => SCHEMA_OWNERS.some((s) => c.name.startsWith(`${s}-`))),
      all.filter((c) => c.name === 'pgbouncer' || c.name.startsWith('migrate-')),
      all.filter((c) => /^n\d+$/.test(c.name)),
    ];
    for (const g of groups) await Promise.all(g.map((c) => stopChild(c, STOP_GRACE_MS)));
  }
}

/** Removes the cluster's Redis keys (its own REDIS_PREFIX). */
export async function clearRedis(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
