/** Whether a scenario held, and the summary table of a run. */
import type { ScenarioReport } from './support/context.js';

/** Recovery must be shorter than this (NATS, Postgres, any service). */
export const RECOVERY_LIMIT_S = 5;

export interface ScenarioResult {
  name: string;
  /** Part of the short (CI) suite. */
  short: boolean;
  seconds: number;
  report?: ScenarioReport;
  /** Why it did not run to the end (an error, the time bound). */
  error?: string;
  held: boolean;
  /** Why it did not hold, one reason a line. */
  why: string[];
}

/** The reasons a finished scenario did not hold (none: it held). */
export function judge(r: ScenarioReport, crashes: string[]): string[] {
  const why: string[] = [];
  if (r.lost) why.push(`${r.lost} lost`);
  if (r.duplicated) why.push(`${r.duplicated} duplicated`);
  if (r.unexpected5xx) why.push(`${r.unexpected5xx} unexpected 5xx`);
  if (r.wrongAnswers) why.push(`${r.wrongAnswers} wrong answers`);
  if (r.unsettled) why.push(`did not settle: ${r.unsettled}`);
  if (r.recoveryS === null) why.push('did not recover within the bound');
  else if (r.recoveryS !== undefined && r.recoveryS >= RECOVERY_LIMIT_S) why.push(`recovery took ${r.recoveryS} s, over ${RECOVERY_LIMIT_S} s`);
  for (const c of crashes) why.push(c);
  return why;
}

const count = (fiveXX: Record<string, number>, http: boolean) =>
  Object.entries(fiveXX)
    .filter(([k]) => Number(k.split(' ')[0]) >= 500 === http)
    .reduce((n, [, c]) => n + c, 0);

/** The summary: one row per scenario, notes under it, and `N of M held`. */
export function summary(results: ScenarioResult[], opts: { short: boolean; seconds: number }): string {
  const rows = [['scenario', 'attempted', 'lost', 'duplicated', '5xx', 'unknown', 'down s', 'recovery s', 'held']];
  for (const r of results) {
    const x = r.report;
    const five = x ? `${count(x.fiveXX, true)}${x.unexpected5xx ? ` (${x.unexpected5xx} unexpected)` : ''}` : '-';
    const rec =
      !x || x.recoveryS === undefined
        ? '-'
        : x.recoveryS === null
          ? 'none'
          : `${x.recoveryS.toFixed(1)}${x.recoveryS >= RECOVERY_LIMIT_S ? ' (over 5)' : ''}`;
    rows.push([
      `${r.name}${r.short ? '' : ' †'}`,
      x ? String(x.attempted) : '-',
      x ? String(x.lost) : '-',
      x ? String(x.duplicated) : '-',
      five,
      x ? String(x.unknown) : '-',
      x?.downS === undefined ? '-' : x.downS.toFixed(1),
      rec,
      r.held ? 'yes' : 'NO',
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const out = [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)];
  out.push('');
  for (const r of results) {
    const x = r.report;
    const lines: string[] = [];
    if (r.error) lines.push(`error: ${r.error}`);
    if (!r.held) lines.push(`NOT HELD: ${r.why.join('; ')}`);
    if (x) {
      lines.push(...x.notes);
      const five = Object.entries(x.fiveXX);
      if (five.length)
        lines.push(`5xx and failed requests: ${five.map(([k, n]) => `${k} ×${n}`).join(', ')} (0 = connection failed, -1 = client timeout)`);
      lines.push(...x.problems);
    }
    out.push(`${r.name} (${r.seconds.toFixed(0)} s):`, ...lines.map((l) => `  ${l}`));
  }
  const held = results.filter((r) => r.held).length;
  out.push(
    '',
    'down s: how long the faulty part was away (kill -9 → the new process ready; nats-server killed → back; pg_ctl restart).',
    'recovery s: from the part being back until a probe answered 200 on every service AND every grant pending then had landed (must be under 5).',
    'unknown: operations whose outcome the client never learnt (still 5xx after retrying with their Idempotency-Key); the database must hold each whole or not at all.',
    '5xx: answers 5xx, retries included (connection failures and client timeouts are listed under each scenario).',
  );
  if (!opts.short && results.some((r) => !r.short)) out.push('', '† not in the short suite (CHAOS_SHORT=1, CI)');
  out.push('', `${held} of ${results.length} held (${opts.short ? 'short' : 'full'} run, ${Math.round(opts.seconds)} s)`);
  return out.join('\n');
}
