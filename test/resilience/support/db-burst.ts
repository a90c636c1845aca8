import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { ChestGrant } from '@ccs/shared';
import { eventually, type TestStack } from '../../support/stack.js';
import { appIdOf, open, registerPlayer, sql, wallet, waitForStarterChest, type Player } from '../../../services/chests/test/support/chests.js';

// A burst of chest openings and credits through the gateway while Postgres connections are lost
// (terminated backends, a restart), and the checks that nothing was half-applied. Every opening
// and keyed credit is retried on 503 or 504 with its Idempotency-Key until it answers 200, as a
// client should; unkeyed credits are sent once.

/** Players with chests to open, and what their balances were before the burst. */
export interface BurstSetup {
  appId: string;
  coinsId: string;
  players: { player: Player; chests: string[]; balanceBefore: string }[];
}

/** One answer of the burst. */
export interface BurstAnswer {
  kind: 'open' | 'credit' | 'credit-unkeyed';
  status: number;
  code?: string;
  body: string;
  /** When it was answered (Date.now()). */
  at: number;
}

export interface BurstResult {
  answers: BurstAnswer[];
  /** chest id → the opening id its 200 answered. */
  openings: Map<string, string>;
  /** Per player: the Idempotency-Keys of its credits that reached 200. */
  creditKeys: string[][];
  /** Per player: unkeyed credits answered 200, and answered 503 or 504 (applied or not). */
  unkeyed: { ok: number; unavailable: number }[];
  /** Openings and keyed credits that had no 200 by the deadline. */
  unfinished: string[];
  began: number;
  ended: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The answers that tell a client "not done, or not known to be done: retry with the same key":
 * 503 for a lost database connection or a service not answering at once, 504 for a service that
 * did not answer within the gateway's bound (a loaded machine whose new connections take tens of
 * milliseconds, under a storm of terminated ones).
 */
const RETRYABLE: ReadonlySet<string> = new Set(['503 database_unavailable', '503 service_unavailable', '504 service_timeout']);
export const isRetryable = (a: Pick<BurstAnswer, 'status' | 'code'>) => RETRYABLE.has(`${a.status} ${a.code ?? ''}`);
/** "1500.01" → 150001, exactly. */
export const cents = (amount: string) => {
  const [whole, frac = ''] = amount.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
};

/** Registers `players` players, each with `chestsEach` unopened chests (starter chest included). */
export async function prepareBurst(stack: TestStack, opts: { players: number; chestsEach: number }): Promise<BurstSetup> {
  const appId = await appIdOf(stack);
  const players = await Promise.all(Array.from({ length: opts.players }, () => registerPlayer(stack)));
  await Promise.all(players.map((p) => waitForStarterChest(stack, p)));
  const coinsId = await eventually(async () => {
    const w = await wallet(stack, players[0]!);
    expect(w.coins).toBeDefined();
    return w.coins!.id;
  }, 20_000);
  const js = stack.nc.jetstream();
  const setup: BurstSetup = { appId, coinsId, players: [] };
  for (const player of players) {
    const chests = [player.starterChestId];
    for (let i = 1; i < opts.chestsEach; i++) {
      const id = randomUUID();
      chests.push(id);
      const payload = ChestGrant.payload.parse({ appId, playerId: player.id, inventoryChestId: id, source: 'earned' });
      await js.publish(`${stack.env.NATS_PREFIX}.${ChestGrant.subject}`, JSON.stringify(payload), { msgID: randomUUID() });
    }
    setup.players.push({ player, chests, balanceBefore: '' });
  }
  const all = setup.players.flatMap((p) => p.chests);
  await eventually(async () => {
    const rows = await sql(stack, 'SELECT id FROM chests.inventory_chests WHERE id = ANY($1::uuid[]) AND opened_at IS NULL', [all]);
    expect(rows).toHaveLength(all.length);
  }, 30_000);
  // Every registration grant applied: the balances the credits will add to.
  await eventually(async () => {
    for (const p of setup.players) {
      const w = await wallet(stack, p.player);
      expect(w.coins!.balance).toBe('1500.00');
      p.balanceBefore = w.coins!.balance;
    }
  }, 20_000);
  return setup;
}

function errorCode(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { errors?: { code?: string }[] }).errors?.[0]?.code;
  } catch {
    return undefined;
  }
}

/**
 * Runs the burst: per player one worker opening its chests (POST and GET alternately, each with
 * its own Idempotency-Key) and two crediting 0.01 with a key; and `unkeyedCredits` unkeyed
 * credits per player. A 503 or 504 is retried with the same key after a short pause, until `deadline`.
 */
export async function runBurst(
  stack: TestStack,
  setup: BurstSetup,
  opts: { keyedCredits: number; unkeyedCredits: number; deadline: number; onAnswer?: (answered: number) => void },
): Promise<BurstResult> {
  const began = Date.now();
  const result: BurstResult = {
    answers: [],
    openings: new Map(),
    creditKeys: setup.players.map(() => []),
    unkeyed: setup.players.map(() => ({ ok: 0, unavailable: 0 })),
    unfinished: [],
    began,
    ended: 0,
  };
  const record = (kind: BurstAnswer['kind'], res: { statusCode: number; body: string }) => {
    const answer = { kind, status: res.statusCode, code: errorCode(res.body), body: res.body.slice(0, 500), at: Date.now() };
    result.answers.push(answer);
    opts.onAnswer?.(result.answers.length);
    return answer;
  };
  /** Sends until 200 (an answer neither 200 nor retryable ends it too, and fails the checks); false if the deadline passed. */
  const untilOk = async (kind: BurstAnswer['kind'], send: () => Promise<{ statusCode: number; body: string }>) => {
    while (Date.now() < opts.deadline) {
      const res = await send();
      const a = record(kind, res);
      if (!isRetryable(a)) return a.status === 200 ? res : undefined;
      await sleep(30 + Math.random() * 50);
    }
    return undefined;
  };
  const creditOnce = (p: Player, key?: string) =>
    stack.inject({
      method: 'POST',
      url: `/api/v1/currencies/${setup.coinsId}/credit`,
      headers: {
        apikey: p.apiKey,
        authorization: `Bearer ${p.token}`,
        'content-type': 'application/json',
        ...(key ? { 'idempotency-key': key } : {}),
      },
      payload: { amount: '0.01' },
    });

  const workers: Promise<void>[] = [];
  setup.players.forEach(({ player, chests }, w) => {
    workers.push(
      (async () => {
        for (const [i, chestId] of chests.entries()) {
          const key = randomUUID();
          const res = await untilOk('open', () => open(stack, player, chestId, { method: i % 2 ? 'GET' : 'POST', idempotencyKey: key }));
          if (res) result.openings.set(chestId, JSON.parse(res.body).meta.opening_id);
          else result.unfinished.push(`open ${chestId}`);
        }
      })(),
    );
    for (let c = 0; c < 2; c++) {
      workers.push(
        (async () => {
          for (let i = 0; i < opts.keyedCredits / 2; i++) {
            const key = randomUUID();
            if (await untilOk('credit', () => creditOnce(player, key))) result.creditKeys[w]!.push(key);
            else result.unfinished.push(`credit ${key}`);
          }
        })(),
      );
    }
    workers.push(
      (async () => {
        for (let i = 0; i < opts.unkeyedCredits; i++) {
          const a = record('credit-unkeyed', await creditOnce(player));
          if (a.status === 200) result.unkeyed[w]!.ok++;
          if (isRetryable(a)) result.unkeyed[w]!.unavailable++;
          await sleep(20);
        }
      })(),
    );
  });
  await Promise.all(workers);
  result.ended = Date.now();
  return result;
}

/** How the burst's answers split by status (and 5xx code), e.g. `{ "200": 410, "503 database_unavailable": 37 }`. */
export function tally(answers: BurstAnswer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const k = a.status === 200 ? '200' : `${a.status} ${a.code ?? ''}`.trim();
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/**
 * The burst's invariants: every answer 200 or retryable (503, 504; never 500 or 4xx), every opening
 * and keyed credit finished, each chest consumed once with the opening its 200 answered and granted
 * exactly once, each keyed credit applied once, each balance the sum of its ledger and of what
 * was answered.
 */
export async function expectNothingHalfApplied(stack: TestStack, setup: BurstSetup, result: BurstResult): Promise<void> {
  const odd = result.answers.filter((a) => !(a.status === 200 || isRetryable(a)));
  // The message carries the tally and the first odd answers' bodies, so a failure in CI says what came back.
  expect(odd.slice(0, 5), `${JSON.stringify(tally(result.answers))} ${JSON.stringify(odd.slice(0, 3))}`).toEqual([]);
  expect(result.unfinished).toEqual([]);

  // Openings: each chest consumed exactly once, by the opening its 200 named; no opening without
  // its consumed chest or the other way round.
  const chests = setup.players.flatMap((p) => p.chests);
  const rows = await sql<{ chest_id: string; opening_id: string | null; opened_at: Date | null; n: number }>(
    stack,
    `SELECT c.id AS chest_id, min(o.id::text) AS opening_id, c.opened_at, count(o.id)::int AS n
       FROM chests.inventory_chests c LEFT JOIN chests.openings o ON o.chest_id = c.id
      WHERE c.id = ANY($1::uuid[]) GROUP BY c.id, c.opened_at`,
    [chests],
  );
  expect(rows).toHaveLength(chests.length);
  for (const r of rows) {
    expect({ chest: r.chest_id, openings: r.n, consumed: r.opened_at !== null }).toEqual({ chest: r.chest_id, openings: 1, consumed: true });
    expect(r.opening_id).toBe(result.openings.get(r.chest_id));
  }
  const players = setup.players.map((p) => p.player.id);
  const [{ n: openingsOfPlayers }] = (await sql<{ n: number }>(
    stack,
    'SELECT count(*)::int AS n FROM chests.openings WHERE player_id = ANY($1::uuid[])',
    [players],
  )) as [{ n: number }];
  expect(openingsOfPlayers).toBe(chests.length);
  // Each opening's grant applied exactly once (redelivered messages change nothing).
  const openingIds = [...result.openings.values()];
  await eventually(async () => {
    const grants = await sql<{ id: string; expected: number; granted: number }>(
      stack,
      `SELECT o.id, jsonb_array_length(o.items) AS expected,
              (SELECT count(*) FROM collections.owned_collectibles g WHERE g.opening_id = o.id)::int AS granted
         FROM chests.openings o WHERE o.id = ANY($1::uuid[])`,
      [openingIds],
    );
    expect(grants).toHaveLength(openingIds.length);
    for (const g of grants) expect(g, `opening ${g.id}`).toEqual({ id: g.id, expected: g.expected, granted: g.expected });
  }, 30_000);

  // Credits: each key applied once; each balance is its ledger's sum, and grew by the keyed credits
  // plus the unkeyed ones answered 200 and possibly some answered 503 or 504 (cut off at COMMIT,
  // or answered by the gateway's bound while the service went on).
  for (const [w, p] of setup.players.entries()) {
    const keys = result.creditKeys[w]!;
    const ledger = await sql<{ reference: string | null; n: number }>(
      stack,
      `SELECT reference, count(*)::int AS n FROM wallet.ledger
        WHERE player_id = $1 AND currency_id = $2 AND reason = 'credit' GROUP BY reference`,
      [p.player.id, setup.coinsId],
    );
    const byKey = new Map(ledger.filter((l) => l.reference !== null).map((l) => [l.reference!, l.n]));
    expect([...byKey.keys()].sort()).toEqual([...keys].sort());
    for (const n of byKey.values()) expect(n).toBe(1);
    const unkeyedApplied = ledger.find((l) => l.reference === null)?.n ?? 0;
    const u = result.unkeyed[w]!;
    expect(unkeyedApplied).toBeGreaterThanOrEqual(u.ok);
    expect(unkeyedApplied).toBeLessThanOrEqual(u.ok + u.unavailable);

    const [sums] = await sql<{ balance: string; ledger: string; converted: string }>(
      stack,
      `SELECT (SELECT amount FROM wallet.balances WHERE player_id = $1 AND currency_id = $2)::text AS balance,
              (SELECT sum(delta) FROM wallet.ledger WHERE player_id = $1 AND currency_id = $2)::text AS ledger,
              (SELECT coalesce(sum(delta), 0) FROM wallet.ledger WHERE player_id = $1 AND currency_id = $2 AND reason = 'duplicate_conversion')::text AS converted`,
      [p.player.id, setup.coinsId],
    );
    expect(cents(sums!.balance)).toBe(cents(sums!.ledger));
    // Besides the credits, the openings' duplicates converted into coins (docs/content.md, "Duplicates").
    expect(cents(sums!.balance)).toBe(cents(p.balanceBefore) + keys.length + unkeyedApplied + cents(sums!.converted));
  }
}
