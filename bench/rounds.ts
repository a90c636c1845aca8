/**
 * The bench's measurements: the warm-up, every floor and scenario at each connection count (each
 * floor before and after the scenarios), and the scale-out phase; each row against its floor.
 */
import type pg from 'pg';
import { CpuMeter, pidsNamed, type CpuSource } from './cpu.js';
import { measure, type Load, type Measured } from './measure.js';
import type { SagaDrain } from './drain.js';
import { secondFloor, withRatios, type Row } from './report.js';
import { FLOORS, type FloorKind, type Prepared, type Scenario } from './scenarios.js';
import type { BenchSession, Log } from './session.js';
import { startReplicas, type Stack } from './stack.js';
import type { StatementMeter } from './statements.js';

export interface RoundsPlan {
  duration: number;
  warmup: number;
  connections: number[];
  scaleConnections: number;
  floorKinds: FloorKind[];
  selected: Scenario[];
  scaled: Scenario[];
  prepared: Map<Scenario, Prepared>;
}

/** CPU accounting: every bench process, the bench database's Postgres backends, NATS, Redis. */
export function cpuMeter(session: BenchSession, monitor: pg.Client): CpuMeter {
  const natsPids = pidsNamed('nats-server');
  const redisPids = pidsNamed('redis-server');
  return new CpuMeter((): CpuSource[] => [
    ...session.procs.filter((x) => !x.exited()).map((x) => ({ label: x.label, pids: () => [x.child.pid!] })),
    { label: 'bench', pids: () => [process.pid] },
    {
      label: 'postgres',
      pids: async () =>
        (await monitor.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()')).rows.map((r) => r.pid),
    },
    { label: 'nats', pids: () => natsPids },
    { label: 'redis', pids: () => redisPids },
  ]);
}

export class Rounds {
  readonly rows: Row[] = [];
  private readonly floorsAt = new Map<string, Measured>();

  constructor(
    private readonly session: BenchSession,
    private readonly stack: Stack,
    private readonly meters: { monitor: pg.Client; cpu: CpuMeter; statements?: StatementMeter; drain?: SagaDrain },
    private readonly plan: RoundsPlan,
    private readonly log: Log,
  ) {}

  private async run(name: string, url: string, load: Load, connections: number, seconds: number, drains = false): Promise<Measured> {
    const d = this.session.dead();
    if (d) throw new Error(`${d.label} stopped (${d.unexpectedExit}) before "${name}"; see its output above`);
    const { statements } = this.meters;
    await load.topUp?.(seconds);
    await settle(this.meters.monitor);
    await statements?.quiet();
    await statements?.reset();
    const drain = drains ? this.meters.drain : undefined;
    const m = await measure(url, load, { connections, seconds, cpu: this.meters.cpu, ...(drain ? { drain: () => drain.until() } : {}) });
    if (!statements) return m;
    // The grants and messages the requests left in flight are their work too: let them land.
    await statements.quiet();
    return { ...m, statements: await statements.read(m.sent) };
  }

  private say(name: string, c: number, m: Measured, r?: Row): void {
    const vs = r && !name.startsWith('floor') ? `; ÷ ${r.floor}: throughput ${r.throughputRatio}, mean ${r.meanRatio}, p99 ${r.p99Ratio}` : '';
    const cpuNote =
      (m.cpu ? `, cpu ${m.cpu.machineBusy}/${m.cpu.cores} busy` : '') +
      (m.drainedMs !== undefined ? `, drained ${m.drainedMs} ms after the load` : '');
    this.log(
      `${name} @${c}: ${m.rps} req/s, mean ${m.mean} ms, p50 ${m.p50} ms, p99 ${m.p99} ms, non-2xx ${m.non2xx}, errors ${m.errors}${cpuNote}${vs}`,
    );
    if (m.non2xx || m.errors) {
      this.log(
        `  ↳ status codes ${JSON.stringify(m.statusCodes)}${m.firstNon2xx ? `; first non-2xx: ${m.firstNon2xx.status} ${m.firstNon2xx.body.replace(/\s+/g, ' ').slice(0, 300)}` : ''}`,
      );
    }
  }

  private floor(k: FloorKind, c: number, seconds: number): Promise<Measured> {
    return this.run(FLOORS[k].name, this.stack.floorBase, { method: 'GET', path: FLOORS[k].path }, c, seconds, FLOORS[k].drains);
  }

  private scenario(s: Scenario, c: number, seconds: number): Promise<Measured> {
    return this.run(s.name, this.stack.base, this.plan.prepared.get(s)!.load, c, seconds);
  }

  async warmUp(): Promise<void> {
    const { warmup, connections, floorKinds, selected } = this.plan;
    if (warmup <= 0) return;
    this.log(`warming up every floor and scenario for ${warmup} s at ${connections[0]} connections (not reported) ...`);
    for (const k of floorKinds) await this.floor(k, connections[0]!, warmup);
    for (const s of selected) {
      const m = await this.scenario(s, connections[0]!, warmup);
      if (m.non2xx || m.errors) this.say(`${s.name} (warm-up)`, connections[0]!, m);
    }
  }

  /**
   * Each floor is measured before and after the scenarios of a connection count, and the
   * faster of the two is the floor: a floor is the least a path can cost, and on a shared
   * machine noise only ever adds to it, so one unlucky floor run would skew every ratio.
   */
  async atConnections(c: number): Promise<void> {
    const { duration, selected } = this.plan;
    const floorRuns = new Map<FloorKind, Measured[]>();
    await this.measureFloors(c, 'before', floorRuns);
    const measured: { s: Scenario; m: Measured }[] = [];
    for (const s of selected) {
      this.log(`measuring ${s.name} at ${c} connections for ${duration} s ...`);
      const m = await this.scenario(s, c, duration);
      measured.push({ s, m });
      const before = { scenario: s.name, connections: c, phase: 'single' as const, floor: `${FLOORS[s.floor].name} (before)` };
      this.say(s.name, c, m, withRatios(m, before, floorRuns.get(s.floor)![0]!));
    }
    if (selected.length) await this.measureFloors(c, 'after', floorRuns);
    this.keepFloors(c, floorRuns);
    for (const { s, m } of measured) {
      this.rows.push({
        ...withRatios(m, { scenario: s.name, connections: c, phase: 'single', floor: FLOORS[s.floor].name }, this.floorsAt.get(`${s.floor}@${c}`)!),
        ...this.versus(s.saga, c, m),
      });
    }
  }

  private async measureFloors(c: number, when: string, floorRuns: Map<FloorKind, Measured[]>): Promise<void> {
    for (const k of this.plan.floorKinds) {
      this.log(`measuring ${FLOORS[k].name} at ${c} connections for ${this.plan.duration} s (${when} the scenarios) ...`);
      const m = await this.floor(k, c, this.plan.duration);
      floorRuns.set(k, [...(floorRuns.get(k) ?? []), m]);
      this.say(FLOORS[k].name, c, m);
    }
  }

  /** The faster run of each floor is its row, and what the scenarios of `c` are compared with. */
  private keepFloors(c: number, floorRuns: Map<FloorKind, Measured[]>): void {
    for (const k of this.plan.floorKinds) {
      const runs = floorRuns.get(k)!;
      const best = runs.reduce((a, b) => (b.rps > a.rps ? b : a));
      this.floorsAt.set(`${k}@${c}`, best);
      this.rows.push({
        ...withRatios(best, { scenario: FLOORS[k].name, connections: c, phase: 'single', floor: FLOORS[k].name }, best),
        ...this.versus(FLOORS[k].versus, c, best),
        floorRuns: runs.map((r) => r.rps),
      });
      if (runs.length > 1)
        this.log(
          `${FLOORS[k].name} @${c}: ${runs.map((r) => r.rps).join(' and ')} req/s before and after the scenarios; the floor is the ${best === runs[0] ? 'first' : 'second'}`,
        );
    }
  }

  /** A row's ratios to a second floor of `c` (its saga floor, or a saga floor's durable one), when that was measured. */
  private versus(k: FloorKind | undefined, c: number, m: Measured): Pick<Row, 'also'> {
    const floor = k && this.floorsAt.get(`${k}@${c}`);
    return k && floor ? { also: secondFloor(m, FLOORS[k].name, floor) } : {};
  }

  /** The scale-out phase: the scaled scenarios again with a second replica of chests and of collections. */
  async scaleOut(): Promise<void> {
    const { scaled, warmup, duration, scaleConnections: c } = this.plan;
    if (!scaled.length) return;
    this.log('scale-out: starting a second replica of chests and of collections (same environment, own health port) ...');
    await startReplicas(this.session, this.stack);
    if (warmup > 0) {
      this.log(`warming the replicas up for ${warmup} s per scenario (not reported) ...`);
      for (const s of scaled) await this.scenario(s, c, warmup);
    }
    for (const s of scaled) {
      this.log(`measuring ${s.name} with two replicas at ${c} connections for ${duration} s ...`);
      const m = await this.scenario(s, c, duration);
      const row = withRatios(
        m,
        { scenario: s.name, connections: c, phase: 'scale-out', floor: FLOORS[s.floor].name },
        this.floorsAt.get(`${s.floor}@${c}`)!,
      );
      this.rows.push({ ...row, ...this.versus(s.saga, c, m) });
      this.say(`${s.name} [2 replicas]`, c, m, row);
    }
  }
}

/**
 * Waits (at most 15 s) until no query of the bench database is running, so the work a previous
 * measurement left in flight (requests autocannon stopped waiting for) does not load the next one.
 */
async function settle(monitor: pg.Client): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const r = await monitor.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`,
    );
    if (r.rows[0]!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
