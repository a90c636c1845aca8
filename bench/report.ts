/**
 * The bench's output: a console table, a JSON file under bench/results/ and bench/results/latest.md
 * (one markdown table of every row with its ratios to its own floor, the scale-out comparison,
 * where the CPU went, and the notes and non-2xx samples).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Measured } from './measure.js';
import { ROOT } from './stack-process.js';
import { statementsMarkdown } from './statements.js';

export interface Row extends Measured {
  scenario: string;
  connections: number;
  /** 'single' (one process per service) or 'scale-out' (two replicas of chests and collections). */
  phase: 'single' | 'scale-out';
  /** The floor row it is compared with (a floor row names itself). */
  floor: string;
  throughputRatio: number;
  meanRatio: number;
  p99Ratio: number;
  /** A floor row: req/s of each of its measurements (before and after the scenarios); the row is the fastest. */
  floorRuns?: number[];
  /** CPU the request path used per request (ms): every measured process but the load generator. */
  cpuPerRequestMs?: number;
  /**
   * The floor's CPU per request ÷ this row's: the throughput ratio the two would have if each had
   * the machine to itself. Other work on a shared machine moves the throughput ratio, hardly this.
   */
  cpuEfficiencyRatio?: number;
  /**
   * The same ratios against a second floor: a saga-running scenario's saga floor, or a saga
   * floor's durable floor (the design's own tax).
   */
  also?: SecondFloor;
}

/** A row's ratios to a second floor measured in the same run. */
export interface SecondFloor {
  floor: string;
  throughputRatio: number;
  meanRatio: number;
  p99Ratio: number;
  /** The second floor's CPU per request (ms). */
  floorCpuPerRequestMs?: number;
  cpuEfficiencyRatio?: number;
}

/** A scale-out row next to the same scenario with one replica, at the same connections. */
export interface ScaleComparison {
  scenario: string;
  connections: number;
  single: Row;
  scaled: Row;
  throughputRatio: number;
  p99Ratio: number;
}

export interface Report {
  at: string;
  settings: Record<string, unknown>;
  notes: string[];
  rows: Row[];
  scale: ScaleComparison[];
}

const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1000) / 1000 : 0);

/** A row's ratios to its floor (for a floor row, 1). */
export function withRatios(
  m: Measured,
  r: Omit<Row, keyof Measured | 'throughputRatio' | 'meanRatio' | 'p99Ratio' | 'floorRuns' | 'cpuPerRequestMs' | 'cpuEfficiencyRatio'>,
  floor: Measured,
): Row {
  const mine = cpuPerRequest(m);
  const floors = cpuPerRequest(floor);
  return {
    ...m,
    ...r,
    throughputRatio: ratio(m.rps, floor.rps),
    meanRatio: ratio(m.mean, Math.max(floor.mean, 0.01)),
    p99Ratio: ratio(m.p99, Math.max(floor.p99, 0.01)),
    ...(mine !== undefined ? { cpuPerRequestMs: Math.round(mine * 1000) / 1000 } : {}),
    ...(mine !== undefined && floors !== undefined ? { cpuEfficiencyRatio: ratio(floors, mine) } : {}),
  };
}

/** A row's ratios to a second floor (`Row.also`). */
export function secondFloor(m: Measured, name: string, floor: Measured): SecondFloor {
  const { throughputRatio, meanRatio, p99Ratio, cpuEfficiencyRatio } = withRatios(
    m,
    { scenario: '', connections: 0, phase: 'single', floor: name },
    floor,
  );
  const theirs = cpuPerRequest(floor);
  return {
    floor: name,
    throughputRatio,
    meanRatio,
    p99Ratio,
    ...(theirs !== undefined ? { floorCpuPerRequestMs: Math.round(theirs * 1000) / 1000 } : {}),
    ...(cpuEfficiencyRatio !== undefined ? { cpuEfficiencyRatio } : {}),
  };
}

/** Milliseconds of CPU per request of the measured processes (stack or floor, Postgres, NATS, Redis), without autocannon. */
function cpuPerRequest(m: Measured): number | undefined {
  if (!m.cpu || m.rps <= 0) return undefined;
  const cores = Object.entries(m.cpu.byLabel).reduce((sum, [label, c]) => (label === 'bench' ? sum : sum + c), 0);
  return (cores * 1000) / m.rps;
}

export function compareScale(rows: Row[]): ScaleComparison[] {
  return rows
    .filter((r) => r.phase === 'scale-out')
    .flatMap((scaled) => {
      const single = rows.find((r) => r.phase === 'single' && r.scenario === scaled.scenario && r.connections === scaled.connections);
      return single
        ? [
            {
              scenario: scaled.scenario,
              connections: scaled.connections,
              single,
              scaled,
              throughputRatio: ratio(scaled.rps, single.rps),
              p99Ratio: ratio(scaled.p99, Math.max(single.p99, 0.01)),
            },
          ]
        : [];
    });
}

/** Busy cores of the machine and how many of them were not the bench's (other work: noise). */
const cpuCell = (r: Row) => (r.cpu ? `${fmt(r.cpu.machineBusy, 1)}/${r.cpu.cores} (${fmt(r.cpu.other, 1)} other)` : '');
const label = (r: Row) => (r.phase === 'scale-out' ? `${r.scenario} [2× chests, 2× collections]` : r.scenario);
const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

function consoleTable(report: Report): void {
  console.table(
    report.rows.map((r) => ({
      scenario: label(r),
      conns: r.connections,
      'req/s': r.rps,
      'mean ms': r.mean,
      'p99 ms': r.p99,
      floor: r.floor,
      'thr ÷ floor': r.throughputRatio,
      'mean ÷ floor': r.meanRatio,
      'p99 ÷ floor': r.p99Ratio,
      'cpu eff ÷ floor': r.cpuEfficiencyRatio ?? '',
      'second floor': r.also?.floor ?? '',
      'thr ÷ 2nd': r.also?.throughputRatio ?? '',
      'cpu eff ÷ 2nd': r.also?.cpuEfficiencyRatio ?? '',
      'non-2xx': r.non2xx + r.errors,
      'cpu busy / other': cpuCell(r),
    })),
  );
  if (report.scale.length) {
    console.table(
      report.scale.map((s) => ({
        scenario: s.scenario,
        conns: s.connections,
        '1 replica req/s': s.single.rps,
        '2 replicas req/s': s.scaled.rps,
        'throughput ×': s.throughputRatio,
        'p99 ×': s.p99Ratio,
        'thr ÷ floor (2 replicas)': s.scaled.throughputRatio,
        'cpu busy 1 → 2':
          s.single.cpu && s.scaled.cpu ? `${fmt(s.single.cpu.machineBusy, 1)} → ${fmt(s.scaled.cpu.machineBusy, 1)} of ${s.scaled.cpu.cores}` : '',
      })),
    );
  }
}

/** The heading, the run's machine and settings, and how to read the rows. */
function introMarkdown(report: Report): string[] {
  const lines: string[] = [];
  const cores = os.cpus().length;
  lines.push(`# Benchmark results`, '');
  lines.push(`Run at ${report.at} on ${cores} cores (${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}.`);
  lines.push(
    `Settings: ${Object.entries(report.settings)
      .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`)
      .join(', ')}.`,
    '',
  );
  lines.push(
    'Every row is compared with its own floor measured in the same run at the same connection count: ratios, not absolute figures, are what carry over between machines.',
  );
  lines.push(
    'Each floor is measured before and after the scenarios of its connection count; the faster run is the floor (noise only adds cost). The last column is the cores the machine was busy, and in brackets how many of them no process of the bench accounts for: other work competing with the run.',
    '',
  );
  lines.push(
    "CPU ms/req is the CPU every measured process (services or floor processes, Postgres, NATS, Redis; not autocannon) used per request; CPU efficiency ÷ floor is the floor's CPU per request divided by the row's: the throughput ratio the two would have with the machine to themselves, which other work on a shared machine hardly moves.",
    '',
  );
  return lines;
}

/** The main table: every row against its floor. */
function rowsMarkdown(report: Report): string[] {
  const lines: string[] = [];
  lines.push(
    "| scenario | connections | req/s | mean ms | p99 ms | floor | throughput ÷ floor | p99 ÷ floor | CPU ms/req | CPU efficiency ÷ floor | non-2xx | mean ÷ floor | cores busy (not the bench's) |",
  );
  lines.push('|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of report.rows) {
    const bad = r.non2xx + r.errors;
    lines.push(
      `| ${label(r)} | ${r.connections} | ${r.rps} | ${fmt(r.mean)} | ${r.p99} | ${r.floor} | ${fmt(r.throughputRatio, 3)} | ${fmt(r.p99Ratio)} | ${fmt(r.cpuPerRequestMs ?? NaN, 3)} | ${fmt(r.cpuEfficiencyRatio ?? NaN, 3)} | ${bad ? `**${bad}**` : 0} | ${fmt(r.meanRatio)} | ${cpuCell(r)} |`,
    );
  }
  return lines;
}

/**
 * Every row that has a second floor: a saga-running scenario against its saga floor, a saga floor
 * against the durable floor (the design's own tax).
 */
function secondFloorMarkdown(report: Report): string[] {
  const rows = report.rows.filter((r) => r.also);
  if (!rows.length) return [];
  const lines = ['', '## Against a second floor: the saga floors', ''];
  lines.push(
    "The writes that run the opening's saga against the saga floor of the same shape (a single opening, registration and purchase against `floor: saga`, the batch of 10 against `floor: saga ×10`), and each saga floor against the durable floor: its ratio there is the design's own tax. A saga floor's run counts until its consumers drained (their CPU included).",
    '',
  );
  lines.push(
    '| scenario | connections | req/s | second floor | throughput ÷ it | p99 ÷ it | CPU ms/req | its CPU ms/req | CPU efficiency ÷ it | drained after the load |',
  );
  lines.push('|---|---:|---:|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const a = r.also!;
    lines.push(
      `| ${label(r)} | ${r.connections} | ${r.rps} | ${a.floor} | ${fmt(a.throughputRatio, 3)} | ${fmt(a.p99Ratio)} | ${fmt(r.cpuPerRequestMs ?? NaN, 3)} | ${fmt(a.floorCpuPerRequestMs ?? NaN, 3)} | ${fmt(a.cpuEfficiencyRatio ?? NaN, 3)} | ${r.drainedMs !== undefined ? `${r.drainedMs} ms` : ''} |`,
    );
  }
  return lines;
}

/** The scale-out table (none without a scale-out phase). */
function scaleMarkdown(report: Report): string[] {
  const lines: string[] = [];
  if (report.scale.length) {
    lines.push('', '## Scale-out: a second replica of chests and of collections', '');
    lines.push(
      '| scenario | connections | req/s, 1 replica | req/s, 2 replicas | throughput × | p99 ms, 1 → 2 | p99 × | throughput ÷ floor, 2 replicas | CPU busy, 1 → 2 replicas |',
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const s of report.scale) {
      const cpu =
        s.single.cpu && s.scaled.cpu ? `${fmt(s.single.cpu.machineBusy, 1)} → ${fmt(s.scaled.cpu.machineBusy, 1)} of ${s.scaled.cpu.cores}` : '';
      lines.push(
        `| ${s.scenario} | ${s.connections} | ${s.single.rps} | ${s.scaled.rps} | ${fmt(s.throughputRatio)} | ${s.single.p99} → ${s.scaled.p99} | ${fmt(s.p99Ratio)} | ${fmt(s.scaled.throughputRatio, 3)} | ${cpu} |`,
      );
    }
    lines.push(
      '',
      'When the machine is already busy on all its cores with one replica, a second one cannot add throughput: the CPU column shows whether that bound was reached.',
    );
  }
  return lines;
}

/** Where the CPU went, per process label (none without CPU figures). */
function cpuMarkdown(report: Report): string[] {
  const lines: string[] = [];
  const withCpu = report.rows.filter((r) => r.cpu);
  if (withCpu.length) {
    const labels = [...new Set(withCpu.flatMap((r) => Object.keys(r.cpu!.byLabel)))].filter((l) =>
      withCpu.some((r) => (r.cpu!.byLabel[l] ?? 0) >= 0.05),
    );
    lines.push('', '## Where the CPU went (cores used during the measurement)', '');
    lines.push(
      '"bench" is this process (autocannon, the load generator, shares the machine); "postgres" counts the backends connected to the bench database; "other" is busy time no bench process accounts for (other work on the machine, Postgres background writers).',
      '',
    );
    lines.push(`| scenario | connections | machine busy | ${labels.join(' | ')} | other |`);
    lines.push(`|---|---:|---:|${labels.map(() => '---:').join('|')}|---:|`);
    for (const r of withCpu) {
      lines.push(
        `| ${label(r)} | ${r.connections} | ${fmt(r.cpu!.machineBusy)} | ${labels.map((l) => fmt(r.cpu!.byLabel[l] ?? 0)).join(' | ')} | ${fmt(r.cpu!.other)} |`,
      );
    }
    lines.push('', '## CPU per request by process (ms)', '');
    lines.push(
      'The cores above divided by the requests per second: what one request costs each process (a saga floor\'s including its consumers\' drain). "all" leaves out the bench (the load generator) and other work.',
      '',
    );
    lines.push(`| scenario | connections | req/s | ${labels.join(' | ')} | all |`);
    lines.push(`|---|---:|---:|${labels.map(() => '---:').join('|')}|---:|`);
    for (const r of withCpu.filter((x) => x.rps > 0)) {
      const perRequest = (l: string) => ((r.cpu!.byLabel[l] ?? 0) * 1000) / r.rps;
      lines.push(
        `| ${label(r)} | ${r.connections} | ${r.rps} | ${labels.map((l) => fmt(perRequest(l), 3)).join(' | ')} | ${fmt(r.cpuPerRequestMs ?? NaN, 3)} |`,
      );
    }
  }
  return lines;
}

/** The notes, and the rows that had non-2xx answers or errors. */
function notesMarkdown(report: Report): string[] {
  const lines: string[] = [];
  const notes = [...report.notes];
  const floors = report.rows.filter((r) => r.floorRuns && r.floorRuns.length > 1);
  if (floors.length)
    notes.push(
      `Floor runs (req/s, before and after the scenarios): ${floors.map((r) => `${r.scenario} @${r.connections}: ${r.floorRuns!.join(', ')}`).join('; ')}.`,
    );
  if (notes.length) lines.push('', '## Notes', '', ...notes.map((n) => `- ${n}`));
  const bad = report.rows.filter((r) => r.non2xx + r.errors > 0);
  if (bad.length) {
    lines.push('', '## Non-2xx answers and errors', '');
    for (const r of bad) {
      const sample = r.firstNon2xx
        ? ` first: ${r.firstNon2xx.status} \`${r.firstNon2xx.body.replace(/`/g, "'").replace(/\s+/g, ' ').slice(0, 300)}\``
        : '';
      lines.push(
        `- ${label(r)} at ${r.connections}: ${r.non2xx} non-2xx (${JSON.stringify(r.statusCodes)}), ${r.errors} errors (${r.timeouts} timeouts).${sample}`,
      );
    }
  }
  return lines;
}

function markdown(report: Report): string {
  const lines = [...introMarkdown(report), ...rowsMarkdown(report), ...secondFloorMarkdown(report), ...scaleMarkdown(report), ...cpuMarkdown(report)];
  lines.push(...statementsMarkdown(report.rows.map((r) => ({ scenario: label(r), connections: r.connections, statements: r.statements }))));
  lines.push(...notesMarkdown(report));
  return lines.join('\n') + '\n';
}

/**
 * Prints the tables and saves bench/results/bench-<time>.json and bench/results/latest.md (or the
 * same two files under BENCH_RESULTS_DIR: the regression guard keeps its runs out of the tree).
 */
export function writeReport(report: Report, log: (s: string) => void): void {
  consoleTable(report);
  const dir = process.env.BENCH_RESULTS_DIR ? path.resolve(process.env.BENCH_RESULTS_DIR) : path.join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `bench-${report.at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  const md = path.join(dir, 'latest.md');
  writeFileSync(md, markdown(report));
  log(`saved ${path.relative(ROOT, file)} and ${path.relative(ROOT, md)}`);
}
