/**
 * Faults of the Postgres nodes under Patroni (scripts/cluster/patroni.ts), each during the
 * history drill's load of keyed writes (./history.ts): the primary's machine lost (Patroni and
 * Postgres killed with SIGKILL), the synchronous standby's lost, and a planned switchover. Each scenario prints the history's
 * counts, the RTO and the client-visible errors, and counts its violations against it.
 */
import type { PatroniCluster } from '../patroni.js';
import { pgbouncerAdmin } from '../postgres.js';
import { sleep } from '../processes.js';
import type { DrillScenario } from './accounting.js';
import { checkHistory, historyLoad, HISTORY, type Write } from './history.js';
import type { Drill } from './index.js';

/** Writes acknowledged before the fault strikes. */
const BEFORE = 20;
/** How long the load goes on once writes succeed again after the fault. */
const AFTER_MS = 5_000;
/** Bound on the load (the fault, the failover and AFTER_MS fit well within it). */
const LOAD_BOUND_MS = 150_000;

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
 * after the first write sent after the fault succeeds (or at LOAD_BOUND_MS); then `recover`, the
 * check, the scenario's lines. `noErrors`: any client-visible error is a violation too.
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
  const until = (async () => {
    while (writes.filter((w) => w.outcome === 'ok').length < BEFORE && Date.now() - started < LOAD_BOUND_MS) await sleep(20);
    struck = await strike();
    for (;;) {
      const back = writes.flatMap((w) => w.attempts).some((a) => a.at > struck!.faultAt && a.outcome === 'ok');
      if (back || Date.now() - started > LOAD_BOUND_MS) break;
      await sleep(50);
    }
    await sleep(AFTER_MS);
  })();
  const load = historyLoad(d.client, players, until, writes);
  await until;
  await load;
  const seconds = (Date.now() - started) / 1000;
  const recovered = await recover();
  const h = await checkHistory(d.db, d.client, writes, struck!.faultAt);
  for (const line of h.lines) d.say(`${name}: ${line}`);
  // `opts.problems`: the scenario's own violations, found while recovering.
  const problems = [...h.problems, ...(opts.problems ?? [])];
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
 * A planned switchover to the synchronous standby under load: PgBouncer paused (its server
 * connections closed as their transactions end, new transactions wait), the switchover through
 * Patroni's REST API (what `patronictl switchover` sends), PgBouncer resumed once HAProxy sends to
 * the new primary. No client-visible error; the pause is the added latency.
 */
export function switchover(d: Drill): Promise<DrillScenario> {
  const p = patroniOf(d);
  return historyScenario(
    d,
    'planned switchover (PgBouncer paused)',
    async () => {
      const members = await p.members();
      const from = members.find((m) => m.role === 'leader')?.name ?? '?';
      const to = members.find((m) => m.role === 'sync_standby')?.name;
      if (!to) throw new Error('no synchronous standby to switch over to');
      const faultAt = Date.now();
      await pgbouncerAdmin(d.cluster.pgbouncerPort, 'PAUSE');
      const paused = Date.now();
      try {
        await p.switchoverByApi(to);
        await p.waitForHaproxyOn(to);
      } finally {
        await pgbouncerAdmin(d.cluster.pgbouncerPort, 'RESUME');
      }
      return { note: `switchover ${from} → ${to}: PgBouncer paused ${secs(Date.now() - paused)} (PAUSE itself ${secs(paused - faultAt)})`, faultAt };
    },
    async () => {
      const t = Date.now();
      await p.healthy(180_000);
      return `healthy again (a primary, two streaming standbys) ${secs(Date.now() - t)} after the load`;
    },
    { noErrors: true },
  );
}
