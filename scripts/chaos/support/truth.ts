/**
 * Ground truth, in SQL, after a scenario has settled: what the database holds, compared with what
 * the client was answered. "lost" = a committed effect missing (a consumed chest without its
 * items or experience, an answered credit not in the ledger, a debited purchase without its chests
 * or refund, a created player without its grants); "duplicated" = an effect applied twice (or one
 * nobody asked for). "unknown" = the client never learnt the outcome (it gave up retrying) and the
 * database holds it whole or not at all, which is consistent.
 */
import type pg from 'pg';
import type { Outcomes } from './outcomes.js';

export interface Verdict {
  lost: number;
  duplicated: number;
  unknown: number;
  /** The first few problems, one line each. */
  problems: string[];
}

const SCHEMAS = ['players', 'wallet', 'chests', 'collections'];
const EXPERIENCE_CONSUMER = 'players-experience';

/** The verdict being made, and what every check reads. */
class Tally {
  readonly v: Verdict = { lost: 0, duplicated: 0, unknown: 0, problems: [] };
  readonly ids: string[];

  constructor(
    private readonly db: pg.Pool,
    readonly o: Outcomes,
  ) {
    this.ids = o.playerIds();
  }

  readonly lost = (n: number, why: string) => n > 0 && ((this.v.lost += n), this.v.problems.length < 12 && this.v.problems.push(`lost: ${why}`));
  readonly dup = (n: number, why: string) =>
    n > 0 && ((this.v.duplicated += n), this.v.problems.length < 12 && this.v.problems.push(`duplicated: ${why}`));
  readonly q = async <T extends pg.QueryResultRow>(text: string, params: unknown[]) => (await this.db.query<T>(text, params)).rows;
}

export async function checkTruth(db: pg.Pool, o: Outcomes): Promise<Verdict> {
  const t = new Tally(db, o);
  for (const check of [chestsTruth, grantsTruth, creditsTruth, purchasesTruth, registrationsTruth, balancesTruth]) await check(t);
  return t.v;
}

/** Chests consumed at most once, each with one opening, and the openings answered. */
async function chestsTruth({ v, lost, dup, q, ids, o }: Tally): Promise<void> {
  // Chests: consumed at most once, and a consumed chest has exactly one opening.
  const chests = await q<{ id: string; consumed: boolean; n: number; opening: string | null }>(
    `SELECT c.id, c.opened_at IS NOT NULL AS consumed, count(o.id)::int AS n, min(o.id::text) AS opening
       FROM chests.inventory_chests c LEFT JOIN chests.openings o ON o.chest_id = c.id
      WHERE c.player_id = ANY($1::uuid[]) GROUP BY c.id`,
    [ids],
  );
  const byChest = new Map(chests.map((c) => [c.id, c]));
  for (const c of chests) {
    dup(Math.max(0, c.n - 1), `chest ${c.id} opened ${c.n} times`);
    if (c.consumed !== c.n > 0) lost(1, `chest ${c.id} ${c.consumed ? 'consumed without an opening' : 'has an opening but is not consumed'}`);
  }
  // Answered openings: each 200 names the chest's one opening; one opening per chest answered.
  const answered = new Map<string, Set<string>>();
  for (const op of o.opens) if (op.openingId) answered.set(op.chestId, (answered.get(op.chestId) ?? new Set()).add(op.openingId));
  for (const [chestId, openings] of answered) {
    dup(openings.size - 1, `chest ${chestId}: ${openings.size} different openings answered 200`);
    const row = byChest.get(chestId);
    for (const id of openings) if (row?.opening !== id) lost(1, `chest ${chestId}: the opening answered (${id}) is not in the database`);
  }
  const tried = new Set(o.opens.map((op) => op.chestId));
  for (const chestId of tried) {
    const row = byChest.get(chestId);
    if (!row?.consumed || answered.has(chestId)) continue;
    const last = o.opens.filter((op) => op.chestId === chestId);
    if (last.some((op) => op.outcome === 'unknown')) v.unknown += 1;
    else
      lost(
        1,
        `chest ${chestId} was consumed but no request was answered its opening (answers: ${last.map((x) => `${x.status} ${x.code ?? ''}`).join(', ')})`,
      );
  }
}

/** Openings granted once (items, experience), collections' tallies, duplicates' conversions. */
async function grantsTruth({ lost, dup, q, ids }: Tally): Promise<void> {
  // Each opening granted exactly once: its items in collections, its experience in players.
  const grants = await q<{ id: string; expected: number; granted: number; xp: boolean }>(
    `SELECT o.id, jsonb_array_length(o.items) AS expected,
            (SELECT count(*) FROM collections.owned_collectibles g WHERE g.opening_id = o.id)::int AS granted,
            EXISTS (SELECT 1 FROM players.processed_messages m WHERE m.message_id = o.id::text AND m.consumer = $2) AS xp
       FROM chests.openings o WHERE o.player_id = ANY($1::uuid[])`,
    [ids, EXPERIENCE_CONSUMER],
  );
  for (const g of grants) {
    lost(g.expected - g.granted > 0 ? 1 : 0, `opening ${g.id}: ${g.granted} of ${g.expected} items in the collection`);
    dup(g.granted - g.expected > 0 ? 1 : 0, `opening ${g.id}: ${g.granted} items granted for ${g.expected}`);
    lost(g.xp ? 0 : 1, `opening ${g.id}: its experience was never applied`);
  }
  const players = await q<{ id: string; xp: string; expected: string; copies: number; owned: number }>(
    `SELECT p.id, p.experience::text AS xp,
            (SELECT coalesce(sum(o.experience), 0) FROM chests.openings o WHERE o.player_id = p.id)::text AS expected,
            (SELECT coalesce(sum(t.copies), 0) FROM collections.player_collectibles t WHERE t.player_id = p.id)::int AS copies,
            (SELECT count(*) FROM collections.owned_collectibles g WHERE g.player_id = p.id AND g.converted_currency IS NULL)::int AS owned
       FROM players.players p WHERE p.id = ANY($1::uuid[])`,
    [ids],
  );
  for (const p of players) {
    const d = Number(p.xp) - Number(p.expected);
    dup(d > 0 ? 1 : 0, `player ${p.id}: experience ${p.xp}, its openings give ${p.expected}`);
    lost(d < 0 ? 1 : 0, `player ${p.id}: experience ${p.xp}, its openings give ${p.expected}`);
    dup(p.copies > p.owned ? 1 : 0, `player ${p.id}: collection tallies ${p.copies} copies for ${p.owned} items owned`);
    lost(p.copies < p.owned ? 1 : 0, `player ${p.id}: collection tallies ${p.copies} copies for ${p.owned} items owned`);
  }
  // Duplicates converted (docs/content.md, "Duplicates"): each converted slot worth something is
  // credited exactly once, under its own reference.
  const conversions = await q<{ slot: string; n: number }>(
    `SELECT 'opening:' || g.opening_id || ':slot:' || g.slot AS slot,
            (SELECT count(*) FROM wallet.ledger l WHERE l.player_id = g.player_id AND l.reason = 'duplicate_conversion'
                AND l.reference = 'opening:' || g.opening_id || ':slot:' || g.slot)::int AS n
       FROM collections.owned_collectibles g WHERE g.player_id = ANY($1::uuid[]) AND g.converted_amount > 0`,
    [ids],
  );
  for (const c of conversions) {
    lost(c.n === 0 ? 1 : 0, `converted ${c.slot}: never credited`);
    dup(Math.max(0, c.n - 1), `converted ${c.slot}: credited ${c.n} times`);
  }
}

/** Credits: each answered key in the ledger once, refused ones not at all. */
async function creditsTruth({ v, lost, dup, q, ids, o }: Tally): Promise<void> {
  // Credits: each key answered 200 in the ledger exactly once; refused ones not at all.
  const ledgerKeys = await q<{ reference: string; n: number }>(
    `SELECT reference, count(*)::int AS n FROM wallet.ledger WHERE player_id = ANY($1::uuid[]) AND reason = 'credit' AND reference IS NOT NULL GROUP BY reference`,
    [ids],
  );
  const applied = new Map(ledgerKeys.map((r) => [r.reference, r.n]));
  const keys = new Set<string>();
  for (const c of o.credits) {
    if (keys.has(c.key)) continue; // the same key sent more than once (a race): counted once
    keys.add(c.key);
    const outcomes = o.credits.filter((x) => x.key === c.key).map((x) => x.outcome);
    const n = applied.get(c.key) ?? 0;
    dup(Math.max(0, n - 1), `credit ${c.key} in the ledger ${n} times`);
    if (outcomes.includes('ok')) lost(n === 0 ? 1 : 0, `credit ${c.key} answered 200 but not in the ledger`);
    else if (outcomes.every((x) => x === 'refused')) dup(n > 0 ? 1 : 0, `credit ${c.key} refused but applied`);
    else v.unknown += 1;
  }
  for (const ref of applied.keys()) if (!keys.has(ref) && !ref.startsWith('setup-')) dup(1, `a credit with key ${ref} nobody of this scenario sent`);
}

/** Purchases: paid and given once, or neither, and settled; answered as they ended. */
async function purchasesTruth({ v, lost, dup, q, ids, o }: Tally): Promise<void> {
  // Purchases: debited once and granted once, or neither (refunded, failed), and settled.
  const purchases = await q<{ id: string; status: string; quantity: number; chests: number; debits: number; refunds: number }>(
    `SELECT p.id, p.status, p.quantity,
            (SELECT count(*) FROM chests.inventory_chests c WHERE c.purchase_id = p.id)::int AS chests,
            (SELECT count(*) FROM wallet.ledger l WHERE l.player_id = p.player_id AND l.reference = p.id::text AND l.reason = 'debit')::int AS debits,
            (SELECT count(*) FROM wallet.ledger l WHERE l.player_id = p.player_id AND l.reference = p.id::text AND l.reason = 'debit_refund')::int AS refunds
       FROM chests.payments p WHERE p.kind = 'purchase' AND p.player_id = ANY($1::uuid[])`,
    [ids],
  );
  const byPurchase = new Map(purchases.map((p) => [p.id, p]));
  for (const p of purchases) {
    const what = `purchase ${p.id} (${p.status}, ${p.debits} debit, ${p.refunds} refund, ${p.chests}/${p.quantity} chests)`;
    dup(Math.max(0, p.debits - 1) + Math.max(0, p.refunds - 1), what);
    if (p.status === 'completed') {
      lost(p.chests < p.quantity ? 1 : 0, what);
      dup(p.chests > p.quantity || p.refunds > 0 ? 1 : 0, what);
      lost(p.debits === 0 ? 1 : 0, `${what}: chests without payment`);
    } else if (['refunded', 'failed'].includes(p.status)) {
      dup(p.chests > 0 ? 1 : 0, what);
      lost(p.debits > p.refunds ? 1 : 0, `${what}: paid, nothing given`);
    } else {
      lost(1, `${what} never settled`);
    }
  }
  const answered201 = new Set<string>();
  let unknownPurchases = 0;
  for (const op of o.purchases) {
    if (op.outcome === 'unknown') unknownPurchases += 1;
    if (op.outcome !== 'ok' || !op.purchaseId) continue;
    answered201.add(op.purchaseId);
    const p = byPurchase.get(op.purchaseId);
    if (!p || p.status !== 'completed') lost(1, `purchase ${op.purchaseId} answered 201 but is ${p?.status ?? 'missing'}`);
  }
  v.unknown += unknownPurchases;
  // A purchase completed but answered otherwise (refused, interrupted) would be bought again by its client.
  const setup = new Set(o.players.flatMap((p) => p.setupPurchases));
  const unanswered = purchases.filter((p) => p.status === 'completed' && !answered201.has(p.id) && !setup.has(p.id));
  dup(
    Math.max(0, unanswered.length - unknownPurchases),
    `${unanswered.length} purchases completed that were not answered 201 (${unknownPurchases} outcomes unknown)`,
  );
}

/** Registrations: one player per email, each with its grants once. */
async function registrationsTruth({ v, lost, dup, q, o }: Tally): Promise<void> {
  // Registrations: each 201 has its player, each player its grants once; one player per email.
  const emails = [...new Set(o.registrations.map((r) => r.email.toLowerCase()))];
  const regs = await q<{
    id: string;
    email: string;
    starter: number;
    initial: number;
    bonus: number;
    expected_initial: number;
    expected_bonus: number;
  }>(
    `SELECT p.id, lower(p.email) AS email,
            (SELECT count(*) FROM chests.inventory_chests c WHERE c.id = p.starter_chest_id)::int AS starter,
            (SELECT count(*) FROM wallet.ledger l WHERE l.player_id = p.id AND l.reason = 'initial_currency')::int AS initial,
            (SELECT count(*) FROM wallet.ledger l WHERE l.player_id = p.id AND l.reason = 'welcome_bonus')::int AS bonus,
            (SELECT count(*) FROM jsonb_each(a.player_rules->'initial_currency') e WHERE e.value::numeric > 0)::int AS expected_initial,
            (SELECT count(*) FROM jsonb_each(a.player_rules->'welcome_bonus') e WHERE e.value::numeric > 0)::int AS expected_bonus
       FROM players.players p JOIN players.apps a ON a.id = p.app_id WHERE lower(p.email) = ANY($1::text[])`,
    [emails],
  );
  const byEmail = new Map<string, typeof regs>();
  for (const r of regs) byEmail.set(r.email, [...(byEmail.get(r.email) ?? []), r]);
  for (const [email, rows] of byEmail) {
    dup(rows.length - 1, `${rows.length} players with the email ${email}`);
    for (const r of rows) {
      const whole = r.starter === 1 && r.initial === r.expected_initial && r.bonus === r.expected_bonus;
      const what = `player ${r.id} (${email}): starter chest ${r.starter}, initial currency ${r.initial}/${r.expected_initial}, welcome bonus ${r.bonus}/${r.expected_bonus}`;
      if (whole) continue;
      if (r.starter > 1 || r.initial > r.expected_initial || r.bonus > r.expected_bonus) dup(1, what);
      else lost(1, what);
    }
  }
  for (const email of emails) {
    const ops = o.registrations.filter((r) => r.email.toLowerCase() === email);
    const created = new Set(ops.filter((r) => r.outcome === 'ok').map((r) => r.playerId));
    dup(Math.max(0, created.size - 1), `${email}: ${created.size} different players answered 201`);
    const rows = byEmail.get(email) ?? [];
    for (const id of created) if (!rows.some((r) => r.id === id)) lost(1, `${email}: player ${id} answered 201 but missing`);
    // A 5xx nobody retried to an answer: held when the player is whole or absent ("held, outcome unknown").
    if (created.size === 0 && ops.some((r) => r.outcome === 'unknown')) v.unknown += 1;
  }
}

/** Money: every balance is its ledger's sum. */
async function balancesTruth({ lost, dup, q, ids }: Tally): Promise<void> {
  // Money: every balance is its ledger's sum.
  const balances = await q<{ player_id: string; currency_id: string; balance: string; ledger: string }>(
    `SELECT b.player_id, b.currency_id, b.amount::text AS balance,
            (SELECT coalesce(sum(l.delta), 0) FROM wallet.ledger l WHERE l.player_id = b.player_id AND l.currency_id = b.currency_id)::text AS ledger
       FROM wallet.balances b WHERE b.player_id = ANY($1::uuid[])`,
    [ids],
  );
  for (const b of balances) {
    const d = Number(b.balance) - Number(b.ledger);
    dup(d > 0 ? 1 : 0, `player ${b.player_id}: balance ${b.balance}, ledger sum ${b.ledger}`);
    lost(d < 0 ? 1 : 0, `player ${b.player_id}: balance ${b.balance}, ledger sum ${b.ledger}`);
  }
}

/** Messages parked (given up on) in any schema since `since`: each is an effect that did not happen. */
export async function parkedSince(db: pg.Pool, since: Date): Promise<string[]> {
  const out: string[] = [];
  for (const s of SCHEMAS) {
    const r = await db.query<{ consumer: string; error: string; n: number }>(
      `SELECT consumer, min(error) AS error, count(*)::int AS n FROM ${s}.parked_messages WHERE parked_at >= $1 GROUP BY consumer`,
      [since],
    );
    for (const row of r.rows) out.push(`${s}: ${row.n} message(s) of ${row.consumer} parked (${row.error.slice(0, 160)})`);
  }
  return out;
}
