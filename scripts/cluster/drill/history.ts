/**
 * The history drill (scripts/cluster/drill/): a steady load of keyed writes (credits, purchases,
 * openings) through the gateways while a fault strikes, every request recorded with its outcome,
 * and a checker that reads the database afterwards, in the spirit of Jepsen's Elle:
 *
 * - every acknowledged write is present exactly once, every refused one not at all, every unknown
 *   one at most once (before any retry);
 * - the same request sent again with its key after the fault agrees: the answer an acknowledged
 *   write got, and for an unknown one a success that leaves it present exactly once;
 * - every balance equals the sum of its ledger;
 * - every opened chest's items are in collections exactly once.
 *
 * It prints the counts, the time until writes succeeded again after the fault (RTO) and every
 * client-visible error (a 503 must carry Retry-After; a 500 or a request past the client's
 * timeout is a failure).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { sleep } from '../processes.js';
import { ok, type Answer, type DrillClient, type Player } from './client.js';

export type WriteKind = 'credit' | 'purchase' | 'open';
/** ok: a 2xx; refused: a 4xx that says it was not done; unknown: anything else (a 5xx, a broken connection, no answer). */
export type Outcome = 'ok' | 'refused' | 'unknown';

export interface Attempt {
  /** When it was sent (ms since the epoch) and how long its answer took. */
  at: number;
  ms: number;
  answer: Answer;
  outcome: Outcome;
}

export interface Write {
  kind: WriteKind;
  player: Player;
  key: string;
  chest?: string;
  attempts: Attempt[];
  /** The outcome of its last attempt. */
  outcome: Outcome;
}

export const outcomeOf = (a: Answer): Outcome =>
  ok(a) ? 'ok' : a.status >= 400 && a.status < 500 && a.code !== 'idempotency_key_in_use' ? 'refused' : 'unknown';

/** The load's shape: players, chests each owns beforehand, requests in flight. */
export const HISTORY = { players: 3, chests: 10, inFlight: 6, retryBoundMs: 60_000 };

function send(client: DrillClient, w: Write): Promise<Answer> {
  const token = w.player.token;
  if (w.kind === 'credit')
    return client.send('POST', `/api/v1/currencies/${client.coins}/credit`, { token, body: { amount: '7' }, json: true, key: w.key });
  if (w.kind === 'purchase')
    return client.send('POST', `/api/v1/chests/${client.wooden}/purchase`, {
      token,
      body: { data: { type: 'purchase', attributes: { currency: 'coins', quantity: 1 } } },
      key: w.key,
    });
  return client.send('POST', `/api/v1/chests/${w.chest}/open`, { token, key: w.key });
}

/** One write until answered, as a careful client sends it: again with the same key after a 5xx or a lost answer, for up to `boundMs`. */
async function perform(client: DrillClient, w: Write, boundMs: number): Promise<void> {
  const deadline = Date.now() + boundMs;
  for (let i = 0; ; i++) {
    const at = Date.now();
    const answer = await send(client, w);
    const outcome = outcomeOf(answer);
    w.attempts.push({ at, ms: Date.now() - at, answer, outcome });
    w.outcome = outcome;
    if (outcome !== 'unknown' || Date.now() > deadline) return;
    await sleep(Math.min(100 * 2 ** i, 1000));
  }
}

/**
 * Runs the load until `until` settles: credits, purchases of one chest, and openings of the
 * players' chests (those bought beforehand, then those the load bought), in turn. Each write is
 * appended to `writes` when it is sent (the caller watches it).
 */
export async function historyLoad(client: DrillClient, players: Player[], until: Promise<unknown>, writes: Write[], o = HISTORY): Promise<Write[]> {
  const closed = players.flatMap((p) => p.chests.map((chest) => ({ player: p, chest })));
  let stopped = false;
  void until.finally(() => (stopped = true));
  let n = 0;
  const next = (): Write | undefined => {
    if (stopped) return undefined;
    const i = n++;
    const player = players[i % players.length]!;
    const kind: WriteKind = i % 3 === 0 ? 'credit' : i % 3 === 1 ? 'purchase' : closed.length ? 'open' : 'credit';
    const w: Write = { kind, player, key: randomUUID(), attempts: [], outcome: 'unknown' };
    if (kind === 'open') {
      const c = closed.shift()!;
      w.player = c.player;
      w.chest = c.chest;
    }
    writes.push(w);
    return w;
  };
  await Promise.all(
    Array.from({ length: o.inFlight }, async () => {
      for (let w = next(); w; w = next()) {
        await perform(client, w, o.retryBoundMs);
        if (w.kind === 'purchase' && w.outcome === 'ok') {
          const bought = (w.attempts.at(-1)!.answer.body?.data as { id: string }[] | undefined) ?? [];
          for (const c of bought) closed.push({ player: w.player, chest: c.id });
        }
      }
    }),
  );
  return writes;
}

/** What the database holds of these players' writes. */
async function observe(db: pg.Pool, ids: string[]) {
  const credits = await db.query<{ key: string; n: number }>(
    `SELECT reference AS key, count(*)::int AS n FROM wallet.ledger WHERE player_id = ANY($1::uuid[]) AND reason = 'credit' AND reference IS NOT NULL GROUP BY reference`,
    [ids],
  );
  const purchases = await db.query<{ key: string; n: number; status: string; chests: number }>(
    `SELECT p.idempotency_key AS key, count(*)::int AS n, max(p.status) AS status,
            (SELECT count(*) FROM chests.inventory_chests c WHERE c.purchase_id = ANY(array_agg(p.id)))::int AS chests
       FROM chests.payments p WHERE p.kind = 'purchase' AND p.player_id = ANY($1::uuid[]) AND p.idempotency_key IS NOT NULL GROUP BY p.idempotency_key`,
    [ids],
  );
  const openings = await db.query<{ chest: string; n: number }>(
    `SELECT chest_id AS chest, count(*)::int AS n FROM chests.openings WHERE player_id = ANY($1::uuid[]) GROUP BY chest_id`,
    [ids],
  );
  return {
    credits: new Map(credits.rows.map((r) => [r.key, r.n])),
    purchases: new Map(purchases.rows.map((r) => [r.key, r])),
    openings: new Map(openings.rows.map((r) => [r.chest, r.n])),
  };
}

/** How many times the database holds a write (a purchase: its payment, completed, with its one chest). */
function presence(w: Write, seen: Awaited<ReturnType<typeof observe>>): { n: number; bad?: string } {
  if (w.kind === 'credit') return { n: seen.credits.get(w.key) ?? 0 };
  if (w.kind === 'open') return { n: seen.openings.get(w.chest!) ?? 0 };
  const p = seen.purchases.get(w.key);
  if (!p) return { n: 0 };
  // A purchase's payment is settled by the chests service's saga: 'completed' with its chest, or refunded.
  if (p.status === 'completed' && p.chests !== 1) return { n: p.n, bad: `purchase ${w.key} completed with ${p.chests} chests` };
  return { n: p.status === 'completed' ? p.n : 0 };
}

/** Balances that differ from the sum of their ledger, one line each. */
async function balancesOff(db: pg.Pool, ids: string[]): Promise<string[]> {
  const r = await db.query<{ player_id: string; amount: string; sum: string }>(
    `SELECT b.player_id, b.amount::text, coalesce(sum(l.delta), 0)::text AS sum
       FROM wallet.balances b LEFT JOIN wallet.ledger l ON l.app_id = b.app_id AND l.player_id = b.player_id AND l.currency_id = b.currency_id
      WHERE b.player_id = ANY($1::uuid[]) GROUP BY b.app_id, b.player_id, b.currency_id, b.amount`,
    [ids],
  );
  return r.rows.filter((x) => Number(x.amount) !== Number(x.sum)).map((x) => `player ${x.player_id}: balance ${x.amount}, ledger sum ${x.sum}`);
}

/**
 * Openings whose items are not in collections exactly once; waits (up to `boundMs`) for grants in
 * flight. `grants`: the openings, their items and the grants found (the last look).
 */
async function itemsOff(db: pg.Pool, ids: string[], boundMs: number, grants = { openings: 0, items: 0, granted: 0 }): Promise<string[]> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const r = await db.query<{ id: string; expected: number; granted: number; distinct_slots: number }>(
      `SELECT o.id, jsonb_array_length(o.items) AS expected,
              (SELECT count(*) FROM collections.owned_collectibles g WHERE g.opening_id = o.id)::int AS granted
         FROM chests.openings o WHERE o.player_id = ANY($1::uuid[])`,
      [ids],
    );
    const off = r.rows.filter((x) => x.granted !== x.expected);
    Object.assign(grants, {
      openings: r.rows.length,
      items: r.rows.reduce((n, x) => n + x.expected, 0),
      granted: r.rows.reduce((n, x) => n + x.granted, 0),
    });
    const over = off.filter((x) => x.granted > x.expected);
    if (!off.length || over.length || Date.now() > deadline)
      return off.map((x) => `opening ${x.id}: ${x.granted} of its ${x.expected} items in collections`);
    await sleep(500);
  }
}

export interface HistoryResult {
  counts: Record<WriteKind, Record<Outcome, number>>;
  /** Requests sent (attempts, retries included) and their outcomes. */
  attempts: Record<Outcome, number>;
  /** Client-visible errors, "<status> <code>" → count. */
  errors: Map<string, number>;
  /** 503 answers without Retry-After, 500s, and requests that got no answer within the client's timeout. */
  no503RetryAfter: number;
  status500: number;
  hung: number;
  /** Acknowledged writes missing (RPO in writes) and duplicated. */
  lost: number;
  duplicated: number;
  /** Unknown writes found applied / not applied before their retry. */
  unknownApplied: number;
  unknownAbsent: number;
  /** Retries after the fault whose answer disagreed. */
  disagreed: number;
  /** Seconds from the fault until the first write sent after it succeeded (undefined: none did). */
  rtoS?: number;
  /** Every violation, one line each (empty: the history holds). */
  problems: string[];
  lines: string[];
}

/**
 * What an acknowledgement and its replay must both say: the document, less an opening's
 * collectibles' `meta.converted` (known only once collections confirmed the grant: absent from an
 * opening acknowledged with its grant still pending, present in its replay).
 */
const stableData = (a: Answer) =>
  JSON.stringify(a.body?.data ?? null, (k, v: unknown) => {
    if (k !== 'meta' || !v || typeof v !== 'object' || !('converted' in v)) return v;
    const { converted: _converted, ...rest } = v as Record<string, unknown>;
    return Object.keys(rest).length ? rest : undefined;
  });
const named = (w: Write) => `${w.kind} ${w.kind === 'open' ? w.chest : w.key}`;
const KINDS: WriteKind[] = ['credit', 'purchase', 'open'];

/** Outcomes per kind and per request, the client-visible errors, and the violations among them. */
function answers(writes: Write[], problems: string[]) {
  const counts = Object.fromEntries(KINDS.map((k) => [k, { ok: 0, refused: 0, unknown: 0 }])) as HistoryResult['counts'];
  for (const w of writes) counts[w.kind][w.outcome] += 1;
  const all = writes.flatMap((w) => w.attempts);
  const attempts = { ok: 0, refused: 0, unknown: 0 };
  for (const a of all) attempts[a.outcome] += 1;
  const errors = new Map<string, number>();
  for (const a of all.filter((x) => x.outcome !== 'ok')) {
    const k = `${a.answer.status} ${a.answer.code ?? ''}`.trim();
    errors.set(k, (errors.get(k) ?? 0) + 1);
  }
  const no503RetryAfter = all.filter((a) => a.answer.status === 503 && !a.answer.retryAfter).length;
  const status500 = all.filter((a) => a.answer.status === 500).length;
  const hung = all.filter((a) => a.answer.status === -1).length;
  if (no503RetryAfter) problems.push(`${no503RetryAfter} answers 503 without Retry-After`);
  if (status500) problems.push(`${status500} answers 500`);
  if (hung) problems.push(`${hung} requests without an answer within the client's timeout`);
  // 409 idempotency_key_in_use: the same key still running (the client sends it again).
  const other = all.filter((a) => a.outcome !== 'ok' && ![503, 409, 500, -1].includes(a.answer.status));
  for (const a of other.slice(0, 5)) problems.push(`a client-visible error other than 503: ${a.answer.status} ${a.answer.code ?? ''}`);
  return { counts, attempts, errors, no503RetryAfter, status500, hung, all };
}

/** Before any retry: acknowledged writes present once, refused ones absent, unknown ones at most once. */
function judge(writes: Write[], seen: Awaited<ReturnType<typeof observe>>, problems: string[]) {
  const r = { lost: 0, duplicated: 0, unknownApplied: 0, unknownAbsent: 0 };
  for (const w of writes) {
    const { n, bad } = presence(w, seen);
    if (bad) problems.push(bad);
    if (n > 1) {
      r.duplicated += 1;
      problems.push(`${named(w)} present ${n} times`);
    }
    if (w.outcome === 'ok' && n === 0) {
      r.lost += 1;
      problems.push(`${named(w)} acknowledged, not present`);
    }
    if (w.outcome === 'refused' && n > 0) problems.push(`${named(w)} refused (${w.attempts.at(-1)!.answer.code}), present`);
    if (w.outcome === 'unknown' && n === 1) r.unknownApplied += 1;
    if (w.outcome === 'unknown' && n === 0) r.unknownAbsent += 1;
  }
  return r;
}

/**
 * Every write not refused sent again with its key (again after a 5xx or `idempotency_key_in_use`,
 * for up to 60 s, as the load does): an acknowledged one answers the same, an unknown one succeeds.
 */
async function retryAll(client: DrillClient, writes: Write[], problems: string[]): Promise<number> {
  let disagreed = 0;
  for (const w of writes.filter((x) => x.outcome !== 'refused')) {
    const copy: Write = { ...w, attempts: [] };
    await perform(client, copy, HISTORY.retryBoundMs);
    const again = copy.attempts.at(-1)!.answer;
    if (!ok(again)) {
      disagreed += 1;
      problems.push(`${named(w)}: its retry answered ${again.status} ${again.code ?? ''}`);
    } else if (w.outcome === 'ok' && stableData(again) !== stableData(w.attempts.at(-1)!.answer)) {
      disagreed += 1;
      problems.push(`${named(w)}: its retry answered other data than its acknowledgement`);
    }
  }
  return disagreed;
}

/**
 * Checks a history (see the file's comment). `faultAt`: when the fault struck (for the RTO).
 * Sends every write that was not refused again with its key, then checks that each is present once.
 */
export async function checkHistory(db: pg.Pool, client: DrillClient, writes: Write[], faultAt: number): Promise<HistoryResult> {
  const problems: string[] = [];
  const ids = [...new Set(writes.map((w) => w.player.id))];
  const a = answers(writes, problems);
  const firstOk = a.all
    .filter((x) => x.at > faultAt && x.outcome === 'ok')
    .map((x) => x.at + x.ms)
    .sort((x, y) => x - y)[0];
  const rtoS = firstOk === undefined ? undefined : (firstOk - faultAt) / 1000;
  const j = judge(writes, await observe(db, ids), problems);
  const disagreed = await retryAll(client, writes, problems);
  const after = await observe(db, ids);
  for (const w of writes.filter((x) => x.outcome !== 'refused')) {
    const { n } = presence(w, after);
    if (n !== 1) problems.push(`${named(w)}: present ${n} times after its retry`);
  }
  problems.push(...(await balancesOff(db, ids)));
  const grants = { openings: 0, items: 0, granted: 0 };
  const itemProblems = await itemsOff(db, ids, 90_000, grants);
  problems.push(...itemProblems);
  const ms = a.all.map((x) => x.ms).sort((x, y) => x - y);
  const slowest = `slowest request ${((ms.at(-1) ?? 0) / 1000).toFixed(1)} s, median ${((ms[Math.floor(ms.length / 2)] ?? 0) / 1000).toFixed(2)} s`;
  const c = (k: WriteKind) => `${k} ${a.counts[k].ok} ok / ${a.counts[k].refused} refused / ${a.counts[k].unknown} unknown`;
  const lines = [
    `history: ${writes.length} writes (${KINDS.map(c).join('; ')}); ${a.all.length} requests (${a.attempts.ok} ok, ${a.attempts.refused} refused, ${a.attempts.unknown} unknown); ${slowest}`,
    `history: acknowledged lost ${j.lost}, duplicated ${j.duplicated}; unknown before retry: ${j.unknownApplied} applied, ${j.unknownAbsent} not; retries disagreeing ${disagreed}; RTO ${rtoS === undefined ? 'none (no write succeeded after the fault)' : `${rtoS.toFixed(1)} s`}`,
    `history: client-visible errors ${[...a.errors].map(([k, v]) => `${k}×${v}`).join(', ') || 'none'}; 503 without Retry-After ${a.no503RetryAfter}, 500 ${a.status500}, past the client's timeout ${a.hung}`,
    `history: grants: ${grants.openings} openings with ${grants.items} items, ${grants.granted} in collections; openings with an item missing or doubled ${itemProblems.length}`,
    `history: ${problems.length ? `${problems.length} violations: ${problems.slice(0, 10).join('; ')}` : 'holds (every check passed)'}`,
  ];
  const { all: _all, ...rest } = a;
  return { ...rest, ...j, disagreed, rtoS, problems, lines };
}
