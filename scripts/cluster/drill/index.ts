/**
 * The cluster drill: bursts of openings and credits through a running cluster's gateways
 * (scripts/cluster/cluster.ts) while a part of it fails, and the accounting of each scenario
 * (attempted / lost / duplicated / client-visible errors / time without a grants leader) ending
 * with "N of M held". test/cluster (`npm run test:cluster`, CI) and `npm run chaos -- --cluster`
 * (scripts/chaos/cluster.ts) both run their scenarios with it.
 */
import pg from 'pg';
import type { Cluster } from '../cluster.js';
import { sleep } from '../processes.js';
import { DrillClient } from './client.js';
import { account, scenarioLine, settle, type Accounting, type DrillScenario } from './accounting.js';
import { burst, BURST, fixedOps } from './load.js';

export { ok, type Answer, type Player } from './client.js';
export { BURST, ROLLING, overload, visible, type Done, type Op } from './load.js';
export type { Accounting, DrillScenario } from './accounting.js';

/** What a scenario's fault did, for its line. */
export interface Struck {
  note: string;
  /** Milliseconds the grants stream had no leader, when the fault touched its leader. */
  leaderlessMs?: number;
}

/** A fault to run during a fixed burst, planned once the scenario's players are ready. */
export interface Fault {
  /** Runs once a quarter of the burst is answered (`started`: the burst's start). */
  strike(started: number): Promise<Struck>;
  /** After the burst: waits until what the fault killed is back and ready; a note. */
  recover?(): Promise<string>;
  tolerated?: DrillScenario['tolerated'];
}

export class Drill {
  readonly client: DrillClient;
  /** Directly on the cluster's Postgres (no PgBouncer): the ground truth. */
  readonly db: pg.Pool;
  readonly scenarios: DrillScenario[] = [];

  constructor(
    readonly cluster: Cluster,
    readonly say: (line: string) => void,
  ) {
    this.client = new DrillClient(cluster);
    this.db = new pg.Pool({ connectionString: cluster.databaseUrl, max: 2 });
    this.db.on('error', () => undefined); // idle connections break when Postgres restarts
  }

  /**
   * Records a scenario (its exits nobody asked for since `exitsBefore`, and `more` such lines),
   * prints its line, and starts waiting in the background until its openings are granted.
   */
  record(s: Omit<DrillScenario, 'exits' | 'settled'>, seconds: number, exitsBefore: number, more: string[] = []): DrillScenario {
    const full: DrillScenario = { ...s, exits: [...this.cluster.unexpectedExits.slice(exitsBefore), ...more] };
    full.settled = settle(this.db, s.players, Date.now());
    this.scenarios.push(full);
    this.say(scenarioLine(full, seconds));
    return full;
  }

  /** A scenario that could not run to its end: counted, not held. */
  failed(name: string, error: string, exitsBefore = this.cluster.unexpectedExits.length): DrillScenario {
    const s: DrillScenario = { name, players: [], done: [], note: '', error, exits: this.cluster.unexpectedExits.slice(exitsBefore) };
    s.settled = Promise.resolve(undefined);
    this.scenarios.push(s);
    this.say(`${name}: did not finish: ${error}`);
    return s;
  }

  /**
   * A fixed burst (BURST: players of its own, every chest opened once and credits, a third of
   * them without a key) with `plan`'s fault struck once a quarter of it is answered.
   */
  async duringBurst(name: string, plan: () => Promise<Fault>): Promise<DrillScenario> {
    const exitsBefore = this.cluster.unexpectedExits.length;
    const players = await this.client.playersWithChests(BURST.players, BURST.chests);
    const ops = fixedOps(players, BURST.credits);
    const fault = await plan();
    const progress = { done: 0 };
    const total = ops.length;
    const started = Date.now();
    const struck = (async () => {
      while (progress.done < total / 4) await sleep(20);
      return fault.strike(started);
    })();
    const done = await burst(this.client, () => ops.shift(), { inFlight: BURST.inFlight, progress });
    const { note, leaderlessMs } = await struck;
    const seconds = (Date.now() - started) / 1000;
    const after = fault.recover ? `; ${await fault.recover()}` : '';
    return this.record({ name, players, done, leaderlessMs, note: note + after, tolerated: fault.tolerated }, seconds, exitsBefore);
  }

  /** The final accounting (lost / duplicated per scenario), its lines printed. */
  async account(): Promise<Accounting> {
    const a = await account(this.db, this.scenarios);
    for (const line of a.lines) this.say(line);
    return a;
  }

  close(): Promise<void> {
    return this.db.end().catch(() => undefined);
  }
}
