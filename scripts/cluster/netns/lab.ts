/**
 * A private network for the partition drills (scripts/cluster/drill/partition-faults.ts): the
 * cluster's own processes as hosts, each in a network namespace of its own (`ip netns`) with its
 * own address, joined by veth pairs to one bridge. The bridge lives in a namespace of its own
 * (the switch), which this namespace joins by one more veth pair (the uplink, with the gateway
 * address): traffic between hosts is bridged there, out of reach of this namespace's firewall
 * (with br_netfilter loaded, a FORWARD policy of DROP, as Docker sets, would drop bridged
 * traffic here). A partition is a route inside a host's namespace sending what it addresses to
 * the cut addresses through a sink: one more namespace on the bridge that does not forward and
 * so drops it without a word (blackhole
 * or unreachable routes would fail the host's own connects at once, which a lost link does not).
 * Both directions stall: the host's packets to them, and its answers to what they send. A
 * connection never completes, one open stalls, as over a lost link, while every other address
 * still answers; healing removes the routes.
 *
 * Everything is named after this process' pid and a letter per lab (namespaces
 * `ccs<pid><l>-<host>` and `ccs<pid><l>-switch`, the uplink `ccu<pid><l>`, the only link made
 * here), on a /24 of 10.231.0.0/16 no interface uses: `destroy` removes it (the veths and the
 * bridge go with their namespaces), so does this process' exit, and a lab whose process died
 * without either (SIGKILL) is removed by the next `NetLab.create`. Only these are touched.
 * Needs root (CAP_NET_ADMIN) and iproute2: `netnsUnavailable()` says why not.
 */
import { spawnSync } from 'node:child_process';

export const IP = process.env.IP_BIN || '/usr/sbin/ip';

export interface NetHost {
  /** pg1, n2, chests-2, … */
  name: string;
  /** Its network namespace (for `ip netns exec`). */
  ns: string;
  /** Its address, reachable from this namespace and from every other host. */
  address: string;
}

function ip(args: string[]): { ok: boolean; out: string } {
  const r = spawnSync(IP, args, { encoding: 'utf8', timeout: 10_000 });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`.trim() };
}

function must(args: string[]): string {
  const r = ip(args);
  if (!r.ok) throw new Error(`ip ${args.join(' ')}: ${r.out}`);
  return r.out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Why namespaces cannot be made here (not root, no iproute2, not permitted), or undefined. */
export function netnsUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `network namespaces are Linux's (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'making network namespaces needs root (CAP_NET_ADMIN)';
  const probe = `ccs${process.pid}z-probe`;
  const r = ip(['netns', 'add', probe]);
  if (!r.ok) return `ip netns add is not permitted here: ${r.out}`;
  ip(['netns', 'del', probe]);
  return undefined;
}

/** Removes namespaces and links of labs whose process is gone. */
function sweepStale(): void {
  for (const line of ip(['netns', 'list']).out.split('\n')) {
    const m = /^(ccs(\d+)[a-z]-\S+)/.exec(line);
    if (m && !alive(Number(m[2]))) ip(['netns', 'del', m[1]!]);
  }
  for (const line of ip(['-o', 'link', 'show']).out.split('\n')) {
    const m = /^\d+: (ccu(\d+)[a-z])[@:]/.exec(line);
    if (m && !alive(Number(m[2]))) ip(['link', 'del', m[1]!]);
  }
}

/** A /24 of 10.231.0.0/16 that no address here is in. */
function freeSubnet(): string {
  const used = new Set([...ip(['-o', '-4', 'addr', 'show']).out.matchAll(/inet 10\.231\.(\d+)\./g)].map((m) => Number(m[1])));
  const routes = ip(['-4', 'route', 'show']).out;
  for (let tries = 0; tries < 200; tries++) {
    const x = 1 + Math.floor(Math.random() * 254);
    if (!used.has(x) && !routes.includes(`10.231.${x}.`)) return `10.231.${x}`;
  }
  throw new Error('no free /24 in 10.231.0.0/16');
}

let labs = 0;

export class NetLab {
  /** This lab's part of every name: the pid and a letter. */
  readonly id = `${process.pid}${String.fromCharCode(97 + (labs++ % 26))}`;
  /** The uplink's end here (the gateway address and the local ones are on it). */
  readonly uplink = `ccu${this.id}`;
  private readonly switchNs = `ccs${this.id}-switch`;
  readonly hosts = new Map<string, NetHost>();
  /** This namespace's address on the uplink: what the hosts reach the rest of the machine at. */
  readonly gateway: string;
  private readonly cuts = new Map<string, string[]>();
  private extra = 1;
  /** The sink's address: cut traffic is routed to it and dropped. */
  private sink = '';
  private veths = 0;
  private destroyed = false;
  private readonly onExit = () => this.destroy();

  private constructor(readonly subnet: string) {
    this.gateway = `${subnet}.1`;
  }

  /** The switch (its bridge up), the uplink with the gateway address, the sink; throws (having removed what it made) when it cannot. */
  static create(): NetLab {
    const why = netnsUnavailable();
    if (why) throw new Error(why);
    sweepStale();
    const lab = new NetLab(freeSubnet());
    process.once('exit', lab.onExit);
    try {
      must(['netns', 'add', lab.switchNs]);
      must(['-n', lab.switchNs, 'link', 'add', 'br0', 'type', 'bridge']);
      must(['-n', lab.switchNs, 'link', 'set', 'br0', 'up']);
      must(['link', 'add', lab.uplink, 'type', 'veth', 'peer', 'name', 'up0', 'netns', lab.switchNs]);
      must(['-n', lab.switchNs, 'link', 'set', 'up0', 'master', 'br0', 'up']);
      must(['addr', 'add', `${lab.gateway}/24`, 'dev', lab.uplink]);
      must(['link', 'set', lab.uplink, 'up']);
      lab.sink = lab.addHost('sink').address;
      // A namespace starts with forwarding off; said here, since the sink is only that.
      must(['netns', 'exec', lab.host('sink').ns, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=0']);
    } catch (err) {
      lab.destroy();
      throw err;
    }
    return lab;
  }

  /**
   * Another address of this namespace on the uplink (x.x.x.2, .3, …): a service here that hosts
   * can be cut from on its own (etcd), while the gateway address still answers them.
   */
  addLocalAddress(): string {
    const address = `${this.subnet}.${++this.extra}`;
    if (this.extra >= 10) throw new Error('at most 8 extra local addresses');
    must(['addr', 'add', `${address}/32`, 'dev', this.uplink]);
    return address;
  }

  /** A host: its namespace (loopback up), a veth pair to the switch's bridge, its address (x.x.x.10 on). */
  addHost(name: string): NetHost {
    if (this.hosts.has(name)) throw new Error(`host ${name} exists`);
    const n = this.veths++;
    const host: NetHost = { name, ns: `ccs${this.id}-${name}`, address: `${this.subnet}.${10 + n}` };
    const port = `p${n}`;
    this.hosts.set(name, host);
    must(['netns', 'add', host.ns]);
    must(['-n', host.ns, 'link', 'set', 'lo', 'up']);
    must(['-n', this.switchNs, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.ns]);
    must(['-n', this.switchNs, 'link', 'set', port, 'master', 'br0', 'up']);
    must(['-n', host.ns, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0']);
    must(['-n', host.ns, 'link', 'set', 'eth0', 'up']);
    return host;
  }

  host(name: string): NetHost {
    const h = this.hosts.get(name);
    if (!h) throw new Error(`no host ${name} (hosts: ${[...this.hosts.keys()].join(', ')})`);
    return h;
  }

  /** The command line that runs `file args` inside a host's namespace (`ip netns exec` execs it: the pid is the program's). */
  command(name: string, file: string, args: string[]): { file: string; args: string[] } {
    return { file: IP, args: ['netns', 'exec', this.host(name).ns, file, ...args] };
  }

  /** Cuts a host off from `addresses`: what it sends to them is dropped (routes through the sink in its namespace). */
  cut(name: string, addresses: string[]): void {
    const h = this.host(name);
    const done = this.cuts.get(name) ?? [];
    this.cuts.set(name, done);
    for (const a of addresses) {
      if (done.includes(a)) continue;
      must(['-n', h.ns, 'route', 'add', `${a}/32`, 'via', this.sink]);
      done.push(a);
    }
  }

  /** Removes every cut of a host. */
  heal(name: string): void {
    const h = this.host(name);
    for (const a of this.cuts.get(name) ?? []) must(['-n', h.ns, 'route', 'del', `${a}/32`, 'via', this.sink]);
    this.cuts.delete(name);
  }

  /** The addresses a host is cut from now. */
  cutFrom(name: string): string[] {
    return [...(this.cuts.get(name) ?? [])];
  }

  /** Removes the namespaces (their veths and the bridge with them) and the uplink (once; also on this process' exit). Their processes must be gone first. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    process.removeListener('exit', this.onExit);
    for (const h of this.hosts.values()) ip(['netns', 'del', h.ns]);
    ip(['link', 'del', this.uplink]);
    ip(['netns', 'del', this.switchNs]);
  }
}
