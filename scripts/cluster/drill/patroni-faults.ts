/**
 * Faults of the Postgres nodes under Patroni (scripts/cluster/patroni.ts), each during the
 * history drill's load of keyed writes (./history.ts): the primary's machine lost (Patroni and
 * Postgres killed with SIGKILL), the synchronous standby's lost, and a planned switchover. Each scenario prints the history's
 * counts, the RTO and the client-visible errors, and counts its violations against it.
 */
import type { PatroniCluster } from '../patroni.js';
import { pgbouncerAdmin, pgbouncerWaiting, QUERY_WAIT_TIMEOUT_S } from '../postgres.js';
import { sleep, waitFor } from '../processes.js';
import type { DrillScenario } from './accounting.js';
import { checkHistory, historyLoad, HISTORY, type Write } from './history.js';
import type { Drill } from './index.js';

/** Writes acknowledged before the fault strikes. */
const BEFORE = 20;
/** How long the load goes on once writes succeed again after the fault. */
const AFTER_MS = 5_000;
/**
 * The load's bound is progress, not time: it ends, and the scenario fails, when no write sent in
 * this long has been acknowledged (a failover that never completes). A failover takes about the
 * leader key's ttl (20 s).
 */
const STALL_MS = 60_000;

interface Strike {
  note: string;
  /** When the fault struck (ms since the epoch). */
  faultAt: number;
}

function patroniOf(d: Drill): PatroniCluster {
  const p = d.cluster.patroni;
  if (!p) throw new Error('this scenario needs the cluster on Patroni (CLUSTER_POSTGRES=patroni)');
  return p;
}

/**
 * The history load with `strike` once BEFORE writes are acknowledged; the load ends AFTER_MS
 * after the first write sent after the fault succeeds, or once no write sent in STALL_MS has been
 * acknowledged (a violation); then `recover`, the check, the scenario's lines. `noErrors`: any
 * client-visible error is a violation too.
 */
export async function historyScenario(
  d: Drill,
  name: string,
  strike: () => Promise<Strike>,
  recover: () => Promise<string>,
  opts: { noErrors?: boolean; problems?: string[] } = {},
): Promise<DrillScenario> {
  const exitsBefore = d.cluster.unexpectedExits.length;
  const players = await d.client.playersWithChests(HISTORY.players, HISTORY.chests);
  const writes: Write[] = [];
  const started = Date.now();
  let struck: Strike | undefined;
  let stalled: string | undefined;
  /** True (and `stalled` set) once no write sent in the last STALL_MS has been acknowledged. */
  const stalls = (phase: string, since: number) => {
    const ok = writes.flatMap((w) => w.attempts).filter((a) => a.outcome === 'ok' && a.at >= since);
    const last = Math.max(since, ...ok.map((a) => a.at));
    if (Date.now() - last <= STALL_MS) return false;
    stalled = `no write acknowledged for ${STALL_MS / 1000} s ${phase}`;
    return true;
  };
  const until = (async () => {
    while (writes.filter((w) => w.outcome === 'ok').length < BEFORE) {
      if (stalls('before the fault', started)) return;
      await sleep(20);
    }
    struck = await strike();
    for (;;) {
      const back = writes.flatMap((w) => w.attempts).some((a) => a.at > struck!.faultAt && a.outcome === 'ok');
      if (back) break;
      if (stalls('after the fault', struck.faultAt)) return;
      await sleep(50);
    }
    await sleep(AFTER_MS);
  })();
  const load = historyLoad(d.client, players, until, writes);
  await until;
  await load;
  const seconds = (Date.now() - started) / 1000;
  if (!struck) return d.failed(name, stalled ?? 'the fault never struck', exitsBefore);
  const recovered = await recover();
  const h = await checkHistory(d.db, d.client, writes, struck.faultAt);
  for (const line of h.lines) d.say(`${name}: ${line}`);
  // `opts.problems`: the scenario's own violations, found while recovering.
  const problems = [...h.problems, ...(stalled ? [stalled] : []), ...(opts.problems ?? [])];
  if (opts.noErrors && h.attempts.unknown + h.attempts.refused > 0)
    problems.push(`${h.attempts.unknown + h.attempts.refused} client-visible errors (this fault must show none)`);
  return d.record(
    {
      name,
      players: [],
      done: [],
      note: `${struck!.note}; ${recovered}; ${h.lines.slice(0, 3).join('; ')}`,
      history: { lost: h.lost, duplicated: h.duplicated, problems },
    },
    seconds,
    exitsBefore,
  );
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The primary's machine lost: SIGKILL to its Patroni and its Postgres; a standby takes over after the leader key's ttl. */
export function primaryKilled(d: Drill): Promise<DrillScenario> {
  const p = patroniOf(d);
  let killed = '';
  return historyScenario(
    d,
    'Postgres primary killed (-9, Patroni fails over)',
    async () => {
      killed = (await p.primary()) ?? '';
      if (!killed) throw new Error('no primary to kill');
      const t = Date.now();
      await p.killNode(killed);
      // From here no request can reach the killed primary: the RTO counts from its death, not from the first signal.
      const faultAt = Date.now();
      return { note: `${killed} (Patroni and Postgres) killed (both gone ${secs(faultAt - t)} after the first SIGKILL)`, faultAt };
    },
    async () => {
      const promoted = (await p.primary()) ?? 'none';
      const t = Date.now();
      p.startNode(killed);
      await p.healthy(180_000);
      return `${promoted} promoted; ${killed} started again, back as a standby in ${secs(Date.now() - t)}`;
    },
  );
}

/**
 * The synchronous standby's machine lost: with strict mode and a second standby, Patroni makes the
 * other one synchronous and writes go on (commits wait meanwhile, not fail).
 */
export function syncStandbyKilled(d: Drill): Promise<DrillScenario> {
  const p = patroniOf(d);
  let killed = '';
  return historyScenario(
    d,
    'synchronous standby killed (-9)',
    async () => {
      killed = (await p.members()).find((m) => m.role === 'sync_standby')?.name ?? '';
      if (!killed) throw new Error('no synchronous standby to kill');
      await p.killNode(killed);
      return { note: `${killed} (Patroni and Postgres) killed`, faultAt: Date.now() };
    },
    async () => {
      const sync = (await p.members()).find((m) => m.role === 'sync_standby')?.name ?? 'none';
      const t = Date.now();
      p.startNode(killed);
      await p.healthy(180_000);
      return `${sync} synchronous meanwhile; ${killed} started again, back as a standby in ${secs(Date.now() - t)}`;
    },
    { noErrors: true },
  );
}

/**
 * A planned switchover to the synchronous standby under load. First the other standby is pointed
 * at that candidate (cascading, Patroni's `replicatefrom` tag) until it streams from it: once
 * promoted, the candidate has a standby streaming already, and its commits (synchronous, strict)
 * need not wait for one to reconnect. Then PgBouncer is paused (its server connections closed as
 * their transactions end, new transactions wait; its query_wait_timeout raised meanwhile), the
 * switchover is asked of Patroni's REST API (what `patronictl switchover` sends), PgBouncer
 * resumes as soon as HAProxy sends to the new primary (not when the API answers: it polls once a
 * second), and the other standby goes back to following the primary. No client-visible error;
 * the pause is the added latency.
 */
export function switchover(d: Drill): Promise<DrillScenario> {
  const p = patroniOf(d);
  const port = d.cluster.pgbouncerPort;
  return historyScenario(
    d,
    'planned switchover (PgBouncer paused)',
    async () => {
      const members = await p.members();
      const from = members.find((m) => m.role === 'leader')?.name ?? '?';
      const to = members.find((m) => m.role === 'sync_standby')?.name;
      const other = members.find((m) => m.name !== from && m.name !== to)?.name;
      if (!to || !other) throw new Error('no synchronous standby and second standby to switch over with');
      const t0 = Date.now();
      p.replicateFrom(other, to);
      await waitFor(`${other} streaming from ${to}`, async () => ((await p.streamingFrom(to)).includes(other) ? true : undefined), {
        timeoutMs: 30_000,
        everyMs: 100,
      });
      const cascaded = Date.now();
      await pgbouncerAdmin(port, `SET query_wait_timeout = ${PAUSED_QUERY_WAIT_S}`);
      const faultAt = Date.now();
      await pgbouncerAdmin(port, 'PAUSE');
      const paused = Date.now();
      let routed: number;
      const asked = p.switchoverByApi(to);
      // Settles only when the switchover fails: the wait below ends then too.
      const failed = asked.then(() => new Promise<never>(() => undefined));
      failed.catch(() => undefined);
      try {
        await Promise.race([p.waitForHaproxyOn(to), failed]);
        routed = Date.now();
      } finally {
        await pgbouncerAdmin(port, 'RESUME');
      }
      const resumed = Date.now();
      // The queries queued during the pause get their server connections one after another: the
      // short bound comes back once none waits any more (sooner, it would fail those that waited).
      await waitFor('PgBouncer: no client waiting after RESUME', async () => ((await pgbouncerWaiting(port)) === 0 ? true : undefined), {
        timeoutMs: PAUSED_QUERY_WAIT_S * 1000,
        everyMs: 100,
      });
      await pgbouncerAdmin(port, `SET query_wait_timeout = ${QUERY_WAIT_TIMEOUT_S}`);
      await asked;
      const answered = Date.now();
      p.replicateFrom(other, undefined);
      return {
        note:
          `${other} streaming from ${to} in ${secs(cascaded - t0)}; switchover ${from} → ${to}: PgBouncer paused ${secs(resumed - paused)} ` +
          `(PAUSE itself ${secs(paused - faultAt)}, HAProxy on ${to} ${secs(routed - paused)} after it; the API answered ${secs(answered - paused)} after it)`,
        faultAt,
      };
    },
    async () => {
      const t = Date.now();
      await p.healthy(180_000);
      return `healthy again (a primary, two streaming standbys) ${secs(Date.now() - t)} after the load`;
    },
    { noErrors: true },
  );
}

/** PgBouncer's query_wait_timeout during the planned pause: every query waits for the resume instead of failing. */
const PAUSED_QUERY_WAIT_S = 30;
