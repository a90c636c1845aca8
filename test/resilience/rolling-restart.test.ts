import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../support/stack.js';
import { appIdOf, catalogIds, credit, purchase, registerPlayer, sql, wallet, type Player } from '../../services/chests/test/support/chests.js';
import { byStatus, Load } from './support/load.js';
import type { Replica } from './support/replica.js';
import { rollingRestart, startReplicas, type Stop } from './support/rolling.js';

// Each scenario: an in-process stack and gateway, two child replicas of the service under test,
// a steady stream of requests through the gateway, and a rolling restart of both replicas.
// About 10 s each; SCENARIO_MS is only a safety net against a hang, minutes on a busy machine.
const SCENARIO_MS = 180_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A decimal string of the wallet ("1500.01") in cents, exactly. */
const cents = (amount: string) => {
  const [whole, frac = ''] = amount.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
};

/** Each replica stopped on its own, cleanly: by its drain. */
function expectCleanStops(stops: Stop[]) {
  expect(stops).toHaveLength(2);
  for (const s of stops) {
    expect({ label: s.label, code: s.code, signal: s.signal }, s.output.slice(-3000)).toEqual({ label: s.label, code: 0, signal: null });
    // Stopped by its drain ("service stopped", exit 0), not by the shutdown bound's forced exit.
    expect(s.output).toMatch(/service stopped/);
    expect(s.output).not.toMatch(/did not stop within/);
  }
}

describe('rolling restart of the wallet service while credits flow', () => {
  let stack: TestStack;
  let replicas: Replica[] = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['players', 'chests', 'collections'] });
    replicas = await startReplicas('wallet', stack.env, 2);
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.terminate(5000)));
    await stack?.close();
  });

  it(
    'answers every credit, and each balance grows by exactly 0.01 per credit answered',
    async () => {
      const players = await Promise.all([1, 2, 3, 4].map(() => registerPlayer(stack)));
      const coins = await eventually(async () => {
        const all = await Promise.all(players.map((p) => wallet(stack, p)));
        for (const w of all) expect(w.coins!.balance).toBe('1500.00');
        return all[0]!.coins!.id;
      }, 20_000);

      const credited = players.map(() => 0);
      const load = new Load(players.length, async (w) => {
        const p = players[w]!;
        const res = await stack.inject({
          method: 'POST',
          url: `/api/v1/currencies/${coins}/credit`,
          headers: { apikey: p.apiKey, authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
          payload: { amount: '0.01' },
        });
        if (res.statusCode === 200) credited[w]!++;
        return { status: res.statusCode, body: res.body };
      }).start();
      await sleep(800);
      const roll = await rollingRestart('wallet', stack.env, replicas, load);
      replicas = roll.running;
      const outcomes = await load.stop();

      expect(byStatus(outcomes), JSON.stringify(outcomes.find((o) => o.status !== 200))).toEqual({ 200: outcomes.length });
      expectCleanStops(roll.stops);
      // Requests kept flowing through both stops, not only before and after them.
      expect(load.between(roll.stops[0]!.signalledAt, roll.stops[1]!.exitedAt).length).toBeGreaterThan(20);

      const balances = await Promise.all(players.map((p) => wallet(stack, p)));
      balances.forEach((b, w) => expect(cents(b.coins!.balance)).toBe(150_000 + credited[w]!));
      const [ledger] = await sql<{ n: number }>(stack, "SELECT count(*)::int AS n FROM wallet.ledger WHERE reason = 'credit'");
      expect(ledger!.n).toBe(outcomes.length);
    },
    SCENARIO_MS,
  );
});

describe('rolling restart of the chests service while players buy and open chests', () => {
  let stack: TestStack;
  let replicas: Replica[] = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['players', 'wallet', 'collections'], env: { GRANT_WAIT_MS: '2000' } });
    replicas = await startReplicas('chests', stack.env, 2);
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.terminate(5000)));
    await stack?.close();
  });

  /** A player with enough coins for the whole run. */
  async function richPlayer(): Promise<Player> {
    const p = await registerPlayer(stack);
    const w = await eventually(() => wallet(stack, p).then((x) => (expect(x.coins).toBeDefined(), x)));
    await credit(stack, p, w.coins!.id, '1000000');
    return p;
  }

  it(
    'answers every purchase and opening; each purchase debits once, each opening is granted once',
    async () => {
      const appId = await appIdOf(stack);
      const wooden = await eventually(async () => {
        const id = (await catalogIds(stack))['Wooden Chest'];
        // Until the content has reached chests the catalog is empty: wait for it, not for undefined.
        expect(id).toBeDefined();
        return id!;
      }, 20_000);
      const players = await Promise.all([1, 2, 3, 4].map(() => richPlayer()));

      const bought = players.map(() => 0);
      const toOpen: (string | undefined)[] = players.map(() => undefined);
      // Each worker buys one chest, then opens it (GET and POST alternately), and again.
      const load = new Load(players.length, async (w) => {
        const p = players[w]!;
        const chestId = toOpen[w];
        if (chestId) {
          toOpen[w] = undefined;
          const method = bought[w]! % 2 ? 'GET' : 'POST';
          const res = await stack.inject({ method, url: `/api/v1/chests/${chestId}/open`, headers: jsonApiHeaders(p.apiKey, p.token) });
          return { status: res.statusCode, body: res.body };
        }
        const res = await purchase(stack, p, wooden, 'coins', 1);
        if (res.statusCode === 201) {
          bought[w]!++;
          toOpen[w] = res.json().data[0].id;
        }
        return { status: res.statusCode, body: res.body };
      }).start();
      await sleep(800);
      const roll = await rollingRestart('chests', stack.env, replicas, load);
      replicas = roll.running;
      const outcomes = await load.stop();

      const failures = outcomes.filter((o) => o.status !== 200 && o.status !== 201);
      expect(failures, JSON.stringify(failures.slice(0, 3))).toEqual([]);
      expectCleanStops(roll.stops);
      expect(load.between(roll.stops[0]!.signalledAt, roll.stops[1]!.exitedAt).length).toBeGreaterThan(20);

      const purchases = outcomes.filter((o) => o.status === 201).length;
      const opened = outcomes.filter((o) => o.status === 200).map((o) => JSON.parse(o.body).meta.opening_id as string);
      expect(purchases).toBe(bought.reduce((a, b) => a + b, 0));
      // Purchases: every one answered is completed, and each debited exactly its price once.
      expect(
        await sql(stack, "SELECT status, count(*)::int AS n FROM chests.payments WHERE kind = 'purchase' AND app_id = $1 GROUP BY status", [appId]),
      ).toEqual([{ status: 'completed', n: purchases }]);
      const balances = await Promise.all(players.map((p) => wallet(stack, p)));
      // Duplicates the openings converted into coins are credited on top (docs/content.md, "Duplicates").
      const converted = await Promise.all(
        players.map(async (p) => {
          const [r] = await sql<{ c: string }>(
            stack,
            "SELECT coalesce(sum(delta), 0)::text AS c FROM wallet.ledger WHERE player_id = $1 AND reason = 'duplicate_conversion'",
            [p.id],
          );
          return cents(r!.c);
        }),
      );
      balances.forEach((b, w) => expect(cents(b.coins!.balance)).toBe((1_001_500 - 500 * bought[w]!) * 100 + converted[w]!));
      // Openings: one per 200 answered, each of them granted exactly once to collections and players.
      const openings = await sql<{ id: string }>(stack, 'SELECT id FROM chests.openings WHERE app_id = $1', [appId]);
      expect(openings.map((o) => o.id).sort()).toEqual([...opened].sort());
      await eventually(async () => {
        const grants = await sql<{ id: string; expected: number; granted: number }>(
          stack,
          `SELECT o.id, jsonb_array_length(o.items) AS expected,
                (SELECT count(*) FROM collections.owned_collectibles g WHERE g.opening_id = o.id)::int AS granted
         FROM chests.openings o WHERE o.app_id = $1`,
          [appId],
        );
        expect(grants.filter((g) => g.granted !== g.expected)).toEqual([]);
        const xp = await sql<{ id: string; experience: string; expected: string }>(
          stack,
          `SELECT p.id, p.experience::text AS experience,
                (SELECT coalesce(sum(o.experience), 0) FROM chests.openings o WHERE o.player_id = p.id)::text AS expected
         FROM players.players p WHERE p.app_id = $1`,
          [appId],
        );
        expect(xp.filter((x) => x.experience !== x.expected)).toEqual([]);
      }, 15_000);
    },
    SCENARIO_MS,
  );
});
