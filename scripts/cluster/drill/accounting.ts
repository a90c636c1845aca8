/**
 * The drill's accounting (scripts/cluster/drill/): when every opening's grants landed, what was
 * lost or duplicated per scenario in the database's ground truth, the line a scenario prints and
 * the summary table that ends with "N of M held".
 */
import type pg from 'pg';
import { sleep } from '../processes.js';
import { ok, type Answer, type Player } from './client.js';
import { describeErrors, median, visible, type Done, type Op } from './load.js';

/** What one scenario did and saw. */
export interface DrillScenario {
  name: string;
  players: Player[];
  done: Done[];
  /** Milliseconds the grants stream had no leader (undefined: its leader was not touched). */
  leaderlessMs?: number;
  note: string;
  /** Seconds from the burst's end until every opening of its players was granted (undefined: not within 90 s). */
  settled?: Promise<number | undefined>;
  /**
   * Client-visible errors this scenario's fault makes unavoidable and that do not keep it from
   * holding (a killed gateway's broken connections), and why; they are still counted and shown.
   */
  tolerated?: { why: string; is: (a: Answer) => boolean };
  /** Exits nobody asked for while it ran. */
  exits: string[];
  /** Why it did not run to the end. */
  error?: string;
  /** A history drill's check (scripts/cluster/drill/history.ts): its violations count against the scenario. */
  history?: { lost: number; duplicated: number; problems: string[] };
  /** Filled in by the final accounting. */
  lost?: number;
  duplicated?: number;
  held?: boolean;
}

/** Openings of these players, their items expected and granted, and whether their experience was. */
async function ungranted(db: pg.Pool, ids: string[]) {
  const rows = await db.query<{ id: string; player_id: string; expected: number; granted: number; xp: boolean }>(
    `SELECT o.id, o.player_id, jsonb_array_length(o.items) AS expected,
            (SELECT count(*) FROM collections.owned_collectibles g WHERE g.opening_id = o.id)::int AS granted,
            EXISTS (SELECT 1 FROM players.processed_messages m WHERE m.message_id = o.id::text AND m.consumer = 'players-experience') AS xp
       FROM chests.openings o WHERE o.player_id = ANY($1::uuid[])`,
    [ids],
  );
  return rows.rows;
}

/** Polls (in the background, while the next scenarios run) until every opening of `players` is granted; seconds since `since`. */
export async function settle(db: pg.Pool, players: Player[], since: number): Promise<number | undefined> {
  const ids = players.map((p) => p.id);
  while (Date.now() - since < 90_000) {
    const rows = await ungranted(db, ids).catch(() => undefined);
    if (rows && !rows.some((g) => g.granted < g.expected || !g.xp)) return (Date.now() - since) / 1000;
    await sleep(250);
  }
  return undefined;
}

/** The client-visible errors that count against a scenario (all but its tolerated ones). */
export const counted = (s: DrillScenario) => visible(s.done).filter((a) => !s.tolerated?.is(a));

/** One scenario's line: operations, slowest and median answer, client-visible errors, retries, time without a leader, the note. */
export function scenarioLine(s: DrillScenario, seconds: number): string {
  const kinds = (k: Op['kind']) => s.done.filter((d) => d.op.kind === k).length;
  const ms = s.done.map((d) => d.ms);
  const tolerated = s.tolerated ? ` (${visible(s.done).length - counted(s).length} of them tolerated: ${s.tolerated.why})` : '';
  return (
    `${s.name}: ${s.done.length} operations (${kinds('open')} openings, ${kinds('credit')} credits, ${kinds('read')} reads) in ${seconds.toFixed(1)} s; ` +
    `slowest answer ${(Math.max(0, ...ms) / 1000).toFixed(1)} s, median ${(median(ms) / 1000).toFixed(2)} s; ` +
    `client-visible errors: ${visible(s.done).length} (${describeErrors(s.done)})${tolerated}; operations retried: ${s.done.filter((d) => d.seen.length > 1).length}` +
    `${s.leaderlessMs !== undefined ? `; grants stream without a leader ${(s.leaderlessMs / 1000).toFixed(2)} s` : ''}; ${s.note}`
  );
}

/** The database's ground truth for these players: openings per chest, keyed credits per key, unkeyed credits per player. */
async function truth(db: pg.Pool, ids: string[]) {
  const openings = await db.query<{ id: string; player_id: string; n: number }>(
    `SELECT c.id, c.player_id, count(o.id)::int AS n
       FROM chests.inventory_chests c LEFT JOIN chests.openings o ON o.chest_id = c.id
      WHERE c.player_id = ANY($1::uuid[]) GROUP BY c.id, c.player_id`,
    [ids],
  );
  const ledger = await db.query<{ reference: string; n: number }>(
    `SELECT reference, count(*)::int AS n FROM wallet.ledger WHERE player_id = ANY($1::uuid[]) AND reason = 'credit' GROUP BY reference`,
    [ids],
  );
  // Credits sent without a key: counted per player (the ledger row holds the gateway's key, not the client's).
  const plain = await db.query<{ player_id: string; n: number }>(
    `SELECT player_id, count(*)::int AS n FROM wallet.ledger WHERE player_id = ANY($1::uuid[]) AND reason = 'credit' AND reference IS NULL GROUP BY player_id`,
    [ids],
  );
  return {
    openings: openings.rows,
    opened: new Map(openings.rows.map((r) => [r.id, r.n])),
    credited: new Map(ledger.rows.map((r) => [r.reference, r.n])),
    plainCredits: new Map(plain.rows.map((r) => [r.player_id, r.n])),
    grants: await ungranted(db, ids),
  };
}

/** What one scenario lost and duplicated, one line each. */
function check(s: DrillScenario, t: Awaited<ReturnType<typeof truth>>): { lost: string[]; duplicated: string[] } {
  const mine = new Set(s.players.map((p) => p.id));
  const lost: string[] = [];
  const duplicated: string[] = [];
  const opens = new Set(s.done.filter((d) => d.op.kind === 'open').map((d) => d.op.chest!));
  for (const d of s.done) {
    const n = d.op.kind === 'open' ? (t.opened.get(d.op.chest!) ?? 0) : (t.credited.get(d.op.key) ?? 0);
    if (d.op.kind === 'open' && ok(d.final) && n === 0) lost.push(`chest ${d.op.chest} answered opened, not opened`);
    // A credit sent without a key is counted per player below: its ledger row holds the gateway's key.
    if (d.op.kind === 'credit' && d.op.key && ok(d.final) && n === 0) lost.push(`credit ${d.op.key} answered, not in the ledger`);
    if (d.op.kind === 'credit' && d.op.key && n > 1) duplicated.push(`credit ${d.op.key} ${n} times in the ledger`);
  }
  for (const p of s.players) {
    const sent = s.done.filter((d) => d.op.kind === 'credit' && !d.op.key && d.op.player === p);
    const answered = sent.filter((d) => ok(d.final)).length;
    const rows = t.plainCredits.get(p.id) ?? 0;
    if (rows < answered) lost.push(`player ${p.id}: ${rows} unkeyed credits in the ledger, ${answered} answered`);
    if (rows > sent.length) duplicated.push(`player ${p.id}: ${rows} unkeyed credits in the ledger, ${sent.length} sent`);
  }
  for (const r of t.openings.filter((o) => mine.has(o.player_id))) {
    if (r.n > 1) duplicated.push(`chest ${r.id} opened ${r.n} times`);
    if (r.n > 0 && !opens.has(r.id)) duplicated.push(`chest ${r.id} opened without being asked`);
  }
  for (const g of t.grants.filter((o) => mine.has(o.player_id))) {
    if (g.granted < g.expected || !g.xp) lost.push(`opening ${g.id}: ${g.granted} of ${g.expected} items granted, experience ${g.xp}`);
    if (g.granted > g.expected) duplicated.push(`opening ${g.id}: ${g.granted} of ${g.expected} items granted`);
  }
  return { lost, duplicated };
}

export interface Accounting {
  /** Every loss and duplicate, "<scenario>: <what>". */
  problems: string[];
  held: number;
  total: number;
  /** The lines to print: when the grants landed, the table, "N of M held". */
  lines: string[];
}

/**
 * Waits until every opening's items and experience are granted (or 90 s after its scenario),
 * then counts per scenario what was lost and duplicated. Held: nothing lost or duplicated, no
 * client-visible error but 503 `overloaded` (and the scenario's tolerated ones), no unexpected exit.
 */
export async function account(db: pg.Pool, scenarios: DrillScenario[]): Promise<Accounting> {
  const settled = await Promise.all(scenarios.map((s) => s.settled ?? Promise.resolve(undefined)));
  const t = await truth(
    db,
    scenarios.flatMap((s) => s.players.map((p) => p.id)),
  );
  const problems: string[] = [];
  for (const s of scenarios) {
    const { lost, duplicated } = check(s, t);
    problems.push(...[...lost, ...duplicated, ...(s.history?.problems ?? [])].map((p) => `${s.name}: ${p}`));
    s.lost = lost.length + (s.history?.lost ?? 0);
    s.duplicated = duplicated.length + (s.history?.duplicated ?? 0);
    s.held = !s.error && s.lost === 0 && s.duplicated === 0 && counted(s).length === 0 && s.exits.length === 0 && !s.history?.problems.length;
  }
  const landed = (i: number) => (settled[i] === undefined ? 'not within 90 s' : `${settled[i]!.toFixed(1)} s`);
  const held = scenarios.filter((s) => s.held).length;
  const lines = [
    `every opening granted (items and experience) after its burst: ${scenarios.map((s, i) => `${s.name} ${settled[i] === undefined ? 'NOT within 90 s' : `${settled[i]!.toFixed(1)} s`}`).join('; ')}`,
    'scenario | attempted | lost | duplicated | client-visible errors | time without leader | grants landed | held',
    ...scenarios.map(
      (s, i) =>
        `${s.name} | ${s.done.length} | ${s.lost} | ${s.duplicated} | ${visible(s.done).length} (${describeErrors(s.done)})` +
        `${s.tolerated && visible(s.done).length ? `, tolerated: ${s.tolerated.why}` : ''}${s.exits.length ? `; unexpected exits: ${s.exits.join('; ')}` : ''}` +
        `${s.error ? `; did not finish: ${s.error}` : ''} | ${s.leaderlessMs === undefined ? '-' : `${(s.leaderlessMs / 1000).toFixed(2)} s`} | ${landed(i)} | ${s.held ? 'yes' : 'NO'}`,
    ),
    `${held} of ${scenarios.length} held`,
  ];
  return { problems, held, total: scenarios.length, lines };
}
