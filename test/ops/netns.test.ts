/**
 * The partition drills' network (scripts/cluster/netns/lab.ts): hosts in network namespaces on
 * a bridge, a cut that drops one host's traffic to another while a third still reaches it, a
 * heal, and nothing left behind. Needs root and `ip netns` (skipped, saying why, elsewhere).
 * And the Patroni nodes' settings in their namespaces (scripts/cluster/patroni-config.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IP, NetLab, netnsUnavailable } from '../../scripts/cluster/netns/lab.js';
import { startRelay } from '../../scripts/cluster/netns/relay.js';
import { etcdArgs, haproxyConfig, PATRONI, patroniCommand, patroniConfig, type PgNode } from '../../scripts/cluster/patroni-config.js';

const why = netnsUnavailable();
const PORT = 7070;

/** Runs a small Node program inside a host's namespace; its output (its exit code is 0 only when it printed). */
function inHost(lab: NetLab, host: string, code: string): Promise<string> {
  const { file, args } = lab.command(host, process.execPath, ['-e', code]);
  return new Promise((resolve) => {
    const c = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('exit', () => resolve(out.trim()));
  });
}

/** A TCP connection from a host to address:port, with a one-second connect bound: the greeting, or how it failed. */
const dial = (lab: NetLab, from: string, address: string, port = PORT) =>
  inHost(
    lab,
    from,
    `const s = require('net').connect({ host: '${address}', port: ${port}, timeout: 1000 });
     s.on('data', (d) => { console.log('got ' + d); s.destroy(); });
     s.on('timeout', () => { console.log('timeout'); s.destroy(); });
     s.on('error', (e) => console.log('error ' + e.code));`,
  );

/** The same from this namespace. */
function dialHere(address: string, port = PORT): Promise<string> {
  return new Promise((resolve) => {
    void import('node:net').then(({ connect }) => {
      const s = connect({ host: address, port, timeout: 1000 });
      s.on('data', (d) => (resolve(`got ${d.toString()}`), s.destroy()));
      s.on('timeout', () => (resolve('timeout'), s.destroy()));
      s.on('error', (e: NodeJS.ErrnoException) => resolve(`error ${e.code}`));
    });
  });
}

describe.skipIf(why)(`network namespaces for the partition drills${why ? ` (skipped: ${why})` : ''}`, () => {
  let lab: NetLab;
  let server: ReturnType<typeof spawn>;

  beforeAll(async () => {
    lab = NetLab.create();
    for (const h of ['a', 'b', 'c']) lab.addHost(h);
    // A greeting server in host a, on its own address.
    const { file, args } = lab.command('a', process.execPath, [
      '-e',
      `require('net').createServer((s) => s.end('hello from a')).listen(${PORT}, '${lab.host('a').address}', () => console.log('listening'))`,
    ]);
    server = spawn(file, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => server.stdout!.once('data', () => resolve()));
  });

  afterAll(() => {
    server?.kill('SIGKILL');
    lab?.destroy();
  });

  it('gives each host its own namespace and address, reachable from here and from the other hosts', async () => {
    const a = lab.host('a');
    expect(a.address).toMatch(/^10\.231\.\d+\.\d+$/);
    expect(new Set(['a', 'b', 'c'].map((h) => lab.host(h).address)).size).toBe(3);
    expect(spawnSync(IP, ['netns', 'list'], { encoding: 'utf8' }).stdout).toContain(a.ns);
    expect(await dialHere(a.address)).toBe('got hello from a');
    expect(await dial(lab, 'b', a.address)).toBe('got hello from a');
    expect(await dial(lab, 'c', a.address)).toBe('got hello from a');
    // Host a's own loopback is its own: nothing listens on 127.0.0.1 there, and here neither does a.
    expect(await dial(lab, 'b', '127.0.0.1')).toBe('error ECONNREFUSED');
  });

  it('a cut drops the traffic between a host and the cut addresses only; healing restores it', async () => {
    const a = lab.host('a');
    lab.cut('a', [lab.host('b').address]);
    expect(lab.cutFrom('a')).toEqual([lab.host('b').address]);
    // b's SYN arrives, a's answer is dropped: the connection never completes, as over a lost link.
    expect(await dial(lab, 'b', a.address)).toBe('timeout');
    expect(await dial(lab, 'c', a.address)).toBe('got hello from a');
    expect(await dialHere(a.address)).toBe('got hello from a');
    lab.heal('a');
    expect(lab.cutFrom('a')).toEqual([]);
    expect(await dial(lab, 'b', a.address)).toBe('got hello from a');
  });

  it('a second address here can be cut on its own while the gateway still answers; a relay passes connections on', async () => {
    const here = lab.addLocalAddress();
    // Two relays here, on the gateway and on the second address, both to host a's server.
    const relays = await Promise.all(
      [lab.gateway, here].map((host) => startRelay({ host, port: PORT + 1 }, { host: lab.host('a').address, port: PORT })),
    );
    try {
      expect(await dial(lab, 'b', lab.gateway, PORT + 1)).toBe('got hello from a');
      expect(await dial(lab, 'b', here, PORT + 1)).toBe('got hello from a');
      lab.cut('b', [here]);
      expect(await dial(lab, 'b', here, PORT + 1)).toBe('timeout');
      expect(await dial(lab, 'b', lab.gateway, PORT + 1)).toBe('got hello from a');
      lab.heal('b');
      expect(await dial(lab, 'b', here, PORT + 1)).toBe('got hello from a');
    } finally {
      await Promise.all(relays.map((r) => r.close()));
    }
  });

  it('removes its namespaces, veths and bridge, and a lab left by a dead process is swept by the next', () => {
    const other = NetLab.create();
    const h = other.addHost('x');
    other.destroy();
    const after = spawnSync(IP, ['netns', 'list'], { encoding: 'utf8' }).stdout;
    expect(after).not.toContain(h.ns);
    expect(spawnSync(IP, ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout).not.toContain(other.id);
    expect(spawnSync(IP, ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout).toContain(lab.uplink);
    // A namespace named after a pid that runs no process is a dead lab's: swept.
    const dead = 'ccs2147483a-stale';
    spawnSync(IP, ['netns', 'add', dead]);
    NetLab.create().destroy();
    expect(spawnSync(IP, ['netns', 'list'], { encoding: 'utf8' }).stdout).not.toContain(dead);
  });
});

describe('the Patroni nodes in network namespaces (settings only)', () => {
  const etcd = [1, 2, 3].map((i) => ({ name: `etcd${i}`, clientPort: 2000 + i, peerPort: 3000 + i, host: '10.231.9.2' }));
  const node: PgNode = {
    name: 'pg1',
    host: '10.231.9.11',
    netns: 'ccs1a-pg1',
    pgPort: 5001,
    apiPort: 8001,
    dir: '/tmp/x/pg1',
    dataDir: '/tmp/x/pg1/data',
    configFile: '/tmp/x/pg1/patroni.yml',
  };

  it('listen on their own address, reach etcd at its own, let the lab subnet in, and start inside their namespace as the Postgres user', () => {
    const c = patroniConfig(node, etcd, '/usr/lib/postgresql/15/bin') as {
      restapi: { listen: string };
      etcd3: { hosts: string[] };
      bootstrap: { pg_hba: string[] };
      postgresql: { listen: string; connect_address: string };
    };
    expect(c.restapi.listen).toBe('10.231.9.11:8001');
    expect(c.postgresql).toMatchObject({ listen: '10.231.9.11:5001', connect_address: '10.231.9.11:5001' });
    expect(c.etcd3.hosts).toEqual(['10.231.9.2:2001', '10.231.9.2:2002', '10.231.9.2:2003']);
    expect(c.bootstrap.pg_hba).toEqual(expect.arrayContaining(['host all all samenet trust', 'host replication all samenet trust']));
    expect(etcdArgs(etcd[0]!, etcd, '/tmp/x')).toEqual(
      expect.arrayContaining(['--listen-client-urls=http://127.0.0.1:2001,http://10.231.9.2:2001', '--advertise-client-urls=http://10.231.9.2:2001']),
    );
    expect(haproxyConfig(6000, [node])).toContain('server pg1 10.231.9.11:5001 maxconn 300 check port 8001');
    const cmd = patroniCommand(node, { uid: 100, gid: 101 });
    expect(cmd).toEqual({
      file: IP,
      args: ['netns', 'exec', 'ccs1a-pg1', 'setpriv', '--reuid=100', '--regid=101', '--clear-groups', PATRONI, '/tmp/x/pg1/patroni.yml'],
    });
    // On loopback (no namespace): Patroni itself, run as the user by spawn's uid and gid; no samenet entries.
    const plain = { ...node, host: undefined, netns: undefined };
    expect(patroniCommand(plain, { uid: 100, gid: 101 })).toEqual({ file: PATRONI, args: ['/tmp/x/pg1/patroni.yml'], as: { uid: 100, gid: 101 } });
    expect((patroniConfig(plain, etcd, '/bin') as { bootstrap: { pg_hba: string[] } }).bootstrap.pg_hba.some((l) => l.includes('samenet'))).toBe(
      false,
    );
  });
});
