/**
 * The Patroni topology's settings (scripts/cluster/patroni-config.ts), checked without starting
 * anything: Patroni's timing rule, synchronous and strict replication, HAProxy sending only to
 * the node answering /primary and cutting a demoted one's sessions, the three etcd members; and
 * how the history checker (scripts/cluster/drill/history.ts) classifies an answer.
 */
import { describe, expect, it } from 'vitest';
import { checkDcsTiming, DCS_TIMING, etcdArgs, haproxyConfig, patroniConfig, type PgNode } from '../../scripts/cluster/patroni-config.js';
import { outcomeOf } from '../../scripts/cluster/drill/history.js';

const etcd = [1, 2, 3].map((i) => ({ name: `etcd${i}`, clientPort: 2000 + i, peerPort: 3000 + i }));
const nodes: PgNode[] = [1, 2, 3].map((i) => ({
  name: `pg${i}`,
  pgPort: 5000 + i,
  apiPort: 8000 + i,
  dir: `/tmp/x/pg${i}`,
  dataDir: `/tmp/x/pg${i}/data`,
  configFile: `/tmp/x/pg${i}/patroni.yml`,
}));

describe('the Patroni topology', () => {
  it('keeps loop_wait + 2 × retry_timeout within ttl, and refuses a timing that does not', () => {
    expect(DCS_TIMING.loop_wait + 2 * DCS_TIMING.retry_timeout).toBeLessThanOrEqual(DCS_TIMING.ttl);
    expect(() => checkDcsTiming(DCS_TIMING)).not.toThrow();
    // Patroni's defaults (30, 10, 10) hold; 20 with 10 and 10 does not.
    expect(() => checkDcsTiming({ ttl: 30, loop_wait: 10, retry_timeout: 10 })).not.toThrow();
    expect(() => checkDcsTiming({ ttl: 20, loop_wait: 10, retry_timeout: 10 })).toThrow(/must not exceed ttl/);
  });

  it('replicates synchronously and strictly, fails a crashed primary over at once, rewinds the old one', () => {
    const c = patroniConfig(nodes[1]!, etcd, '/usr/lib/postgresql/15/bin') as {
      name: string;
      etcd3: { hosts: string[] };
      bootstrap: { dcs: Record<string, unknown> & { postgresql: { use_pg_rewind: boolean } } };
      postgresql: { listen: string; data_dir: string };
    };
    expect(c.name).toBe('pg2');
    expect(c.etcd3.hosts).toEqual(['127.0.0.1:2001', '127.0.0.1:2002', '127.0.0.1:2003']);
    expect(c.bootstrap.dcs).toMatchObject({ ...DCS_TIMING, synchronous_mode: true, synchronous_mode_strict: true, master_start_timeout: 0 });
    expect(c.bootstrap.dcs.postgresql.use_pg_rewind).toBe(true);
    expect(c.postgresql).toMatchObject({ listen: '127.0.0.1:5002', data_dir: '/tmp/x/pg2/data' });
  });

  it("sends HAProxy's connections only to the node whose REST API answers 200 on /primary", () => {
    const cfg = haproxyConfig(6000, nodes);
    expect(cfg).toContain('bind 127.0.0.1:6000');
    expect(cfg).toContain('option httpchk OPTIONS /primary');
    expect(cfg).toContain('http-check expect status 200');
    expect(cfg).toMatch(/default-server .*on-marked-down shutdown-sessions/);
    for (const n of nodes) expect(cfg).toContain(`server ${n.name} 127.0.0.1:${n.pgPort} maxconn 300 check port ${n.apiPort}`);
    // A standby (down for HAProxy) is checked more often: a promoted one is sent to soon.
    expect(cfg).toMatch(/default-server inter 500ms downinter 200ms /);
    // The stats socket (each server's state, for the drill) only when asked for.
    expect(cfg).not.toContain('stats socket');
    expect(haproxyConfig(6000, nodes, '/tmp/x/haproxy.sock')).toContain('stats socket /tmp/x/haproxy.sock mode 600 level user');
  });

  it('starts three etcd members that know each other', () => {
    const args = etcdArgs(etcd[0]!, etcd, '/tmp/x');
    expect(args).toContain('--name=etcd1');
    expect(args).toContain('--initial-cluster=etcd1=http://127.0.0.1:3001,etcd2=http://127.0.0.1:3002,etcd3=http://127.0.0.1:3003');
    expect(args).toContain('--listen-client-urls=http://127.0.0.1:2001');
  });
});

describe("the history checker's outcomes", () => {
  it('counts a 2xx as ok, a refusal as refused, and a 5xx, a key in use or a lost answer as unknown', () => {
    expect(outcomeOf({ status: 201 })).toBe('ok');
    expect(outcomeOf({ status: 422, code: 'insufficient_funds' })).toBe('refused');
    expect(outcomeOf({ status: 409, code: 'idempotency_key_in_use' })).toBe('unknown');
    expect(outcomeOf({ status: 503, code: 'database_unavailable' })).toBe('unknown');
    expect(outcomeOf({ status: 504, code: 'service_timeout' })).toBe('unknown');
    expect(outcomeOf({ status: 0, code: 'connection_failed' })).toBe('unknown');
  });
});
