/**
 * Where the CPU went during one measurement, from /proc (Linux; elsewhere nothing is reported):
 * the whole machine's busy cores, and per process of the bench (each service and replica, the
 * floor processes, the bench itself: autocannon is the load generator), Postgres backends of the
 * bench database, nats-server and redis-server. "other" is the machine's busy time nobody of the
 * bench accounts for: other people's work on a shared machine, and Postgres' background writers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** A process to account for: a label and how to find its pids now. */
export interface CpuSource {
  label: string;
  pids(): number[] | Promise<number[]>;
}

interface Snapshot {
  at: number;
  busy: number;
  total: number;
  ticks: Map<string, Map<number, number>>;
}

/** Cores used per label over a measurement, with the machine's busy cores and the unaccounted rest. */
export interface CpuUse {
  cores: number;
  machineBusy: number;
  byLabel: Record<string, number>;
  other: number;
}

const available = (() => {
  try {
    readFileSync('/proc/stat');
    return true;
  } catch {
    return false;
  }
})();

function machine(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
  return { busy, total: busy + idle! + iowait! };
}

/** utime + stime of a process (all its threads), in clock ticks; undefined once it is gone. */
function processTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(rest[11]) + Number(rest[12]);
  } catch {
    return undefined;
  }
}

/** Pids whose command name (/proc/<pid>/comm) is `name`, e.g. nats-server. */
export function pidsNamed(name: string): number[] {
  if (!available) return [];
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return pids;
}

export class CpuMeter {
  constructor(private readonly sources: () => CpuSource[]) {}

  async start(): Promise<Snapshot | undefined> {
    return available ? this.snapshot() : undefined;
  }

  /**
   * The cores used since `start`. With `perSeconds` (a run counted until its consumers drained,
   * longer than its load) the CPU of the whole interval is spread over the load's seconds, so
   * cores × seconds ÷ requests is the CPU per request, the drain's included.
   */
  async stop(start: Snapshot | undefined, perSeconds?: number): Promise<CpuUse | undefined> {
    if (!start) return undefined;
    const end = await this.snapshot();
    const cores = os.cpus().length;
    const totalDelta = end.total - start.total;
    if (totalDelta <= 0) return undefined;
    const elapsed = (end.at - start.at) / 1000;
    // Clock ticks per second, from the machine's own counters (USER_HZ, normally 100).
    const hz = totalDelta / (elapsed * cores);
    const seconds = perSeconds && perSeconds > 0 ? perSeconds : elapsed;
    const byLabel: Record<string, number> = {};
    for (const [label, pids] of end.ticks) {
      let ticks = 0;
      const before = start.ticks.get(label);
      // A pid born during the measurement counts whole (its ticks are all from this interval).
      for (const [pid, t] of pids) ticks += t - (before?.get(pid) ?? 0);
      byLabel[label] = round(ticks / hz / seconds);
    }
    const machineBusy = round((end.busy - start.busy) / hz / seconds);
    const known = Object.values(byLabel).reduce((a, b) => a + b, 0);
    return { cores, machineBusy, byLabel, other: round(Math.max(0, machineBusy - known)) };
  }

  private async snapshot(): Promise<Snapshot> {
    const ticks = new Map<string, Map<number, number>>();
    for (const source of this.sources()) {
      const perPid = ticks.get(source.label) ?? new Map<number, number>();
      for (const pid of await source.pids()) {
        const t = processTicks(pid);
        if (t !== undefined) perPid.set(pid, t);
      }
      ticks.set(source.label, perPid);
    }
    const m = machine();
    return { at: Date.now(), busy: m.busy, total: m.total, ticks };
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
