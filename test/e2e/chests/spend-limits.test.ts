/**
 * Spend limits (docs/design.md §7, docs/compliance.md "Spend limits") end to end, through the gateway
 * against the real services, Postgres, NATS and Redis. An app whose content makes gems and
 * vault_key paid, sets no region or age gate, and limits players of at most 17 in DE and FR to 60
 * units of paid currency a UTC day and 200 a month. Every paid path counts (purchases, a paid key,
 * a paid timer skip, a batch with a paid key chest); past a limit → 403 `spend_limit_reached` with
 * `meta.limit` and nothing debited; GET /api/v1/players/me/limits shows the standing.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, readContentFile, type AppContent } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { grantCurrency } from '../../support/grant-currency.js';
import { call, newPlayer, ok, type Player } from '../../security/support/tenants.js';

const THIS_YEAR = new Date().getUTCFullYear();
const MINOR = THIS_YEAR - 15;
const ADULT = THIS_YEAR - 30;
const PER_DAY = 60;
const PER_MONTH = 200;

/** The demo content, gems and vault_key paid, no region or age gate, a spend limit for minors in DE and FR. */
function limitedContent(): AppContent {
  const c = readContentFile();
  return {
    ...c,
    compliance: {
      ...c.compliance!,
      paid_currencies: ['gems', 'vault_key'],
      blocked_regions: [],
      min_age: undefined,
      spend_limits: [{ max_age: 17, per_day: PER_DAY, per_month: PER_MONTH, countries: ['DE', 'FR'] }],
      // The content's own limits alone (the demo's rule packs are test/e2e/chests/rule-packs.test.ts').
      rule_packs: [],
    },
  };
}

let stack: TestStack;
let app: { appId: string; key: string };
let ids: Record<string, string>;

beforeAll(async () => {
  // A fast payments sweeper: a reservation left by a crashed saga is settled within seconds.
  stack = await startStack({ env: { PAYMENT_SWEEP_INTERVAL_MS: '200', PAYMENT_STALE_MS: '1500' } });
  const created = await stack.bus.request(
    AdminCreateApp,
    { name: 'Spend limits', content: limitedContent() },
    { requestId: `spend-${randomBytes(4).toString('hex')}` },
  );
  app = { appId: created.appId, key: created.publishableKey };
  await eventually(async () => {
    const data = ok(await call(stack, 'GET', '/api/v1/chests?page[limit]=100', app)).data as { id: string; attributes: { name: string } }[];
    expect(data.map((c) => c.attributes.name)).toContain('Vault Chest');
    ids = Object.fromEntries(data.map((c) => [c.attributes.name, c.id]));
  }, 20_000);
}, 90_000);

afterAll(async () => stack?.close());

/** A player of the app who declared `declared`, holding `gems` in all (the 15 of registration, the rest granted by the studio), coins and 3 keys. */
async function player(declared: { country?: string; birth_year?: number }, gems = 500): Promise<Player> {
  const p = await newPlayer(stack, app.key);
  if (Object.keys(declared).length)
    ok(await call(stack, 'PATCH', '/api/v1/players/me', p, { payload: { data: { type: 'player', attributes: declared } } }));
  await eventually(async () => expect(await balance(p, 'gems')).toBe('15.00'), 20_000);
  await grantCurrency(stack, app.appId, p.id, 'gems', String(gems - 15));
  await grantCurrency(stack, app.appId, p.id, 'coins', '5000');
  await grantCurrency(stack, app.appId, p.id, 'vault_key', '3');
  return p;
}

const purchase = (p: Player, chest: string, currency: string, quantity = 1, key?: string) =>
  call(stack, 'POST', `/api/v1/chests/${ids[chest]!}/purchase`, p, {
    payload: { data: { type: 'purchase', attributes: { currency, quantity } } },
    ...(key ? { headers: { 'idempotency-key': key } } : {}),
  });

async function balance(p: Player, code: string): Promise<string> {
  const data = ok(await call(stack, 'GET', '/api/v1/currencies', p)).data as { attributes: { code: string; balance: { amount: string } } }[];
  return data.find((c) => c.attributes.code === code)!.attributes.balance.amount;
}

interface Limit {
  type: string;
  id: string;
  attributes: { period: string; limit: number; spent: number; remaining: number; resets_at: string };
}
async function limits(p: Player): Promise<Limit[]> {
  const res = await call(stack, 'GET', '/api/v1/players/me/limits', p);
  const body = ok(res);
  expectJsonApi(body);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(body.meta.total_count).toBe(body.data.length);
  return body.data;
}
const spent = async (p: Player) => Object.fromEntries((await limits(p)).map((l) => [l.id, l.attributes.spent]));

/** Next UTC midnight, and the first of next month (UTC), as ISO strings. */
function periodEnds(now = new Date()) {
  return {
    day: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString(),
    month: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
  };
}

/** The player's gems debits and refunds in the wallet's ledger (negative: debited). */
const gemsLedger = async (p: Player) =>
  (
    await stack.services.wallet!.deps.pool.query<{ delta: string; reason: string }>(
      `SELECT l.delta::text, l.reason FROM ledger l JOIN currencies c ON c.id = l.currency_id
        WHERE l.player_id = $1 AND c.code = 'gems' AND l.reason IN ('debit', 'debit_refund') ORDER BY l.id`,
      [p.id],
    )
  ).rows;

/** Moves all of the player's payments to yesterday, as if they had been made then. */
const backdate = (p: Player) =>
  stack.services.chests!.deps.pool.query("UPDATE payments SET created_at = created_at - interval '1 day' WHERE player_id = $1", [p.id]);

function expectLimitReached(res: Awaited<ReturnType<typeof purchase>>, period: 'day' | 'month', limit: number, spentSoFar: number) {
  const [error] = expectError(res, 403, 'spend_limit_reached');
  const meta = (error as unknown as { meta: { limit: unknown } }).meta;
  expect(meta.limit).toEqual({ period, limit, spent: spentSoFar, resets_at: periodEnds()[period] });
  return error!;
}

describe('spend limits', () => {
  it(
    'a minor buys up to the daily limit, the next purchase is refused (403 meta.limit, balance unchanged); a replay under an Idempotency-Key counts once; /players/me/limits before and after',
    { timeout: 180_000 },
    async () => {
      const p = await player({ country: 'FR', birth_year: MINOR });
      const ends = periodEnds();
      expect(await limits(p)).toEqual([
        {
          type: 'spend_limit',
          id: 'day',
          attributes: { period: 'day', limit: PER_DAY, spent: 0, remaining: PER_DAY, resets_at: ends.day },
          relationships: {},
        },
        {
          type: 'spend_limit',
          id: 'month',
          attributes: { period: 'month', limit: PER_MONTH, spent: 0, remaining: PER_MONTH, resets_at: ends.month },
          relationships: {},
        },
      ]);

      const first = ok(await purchase(p, 'Silver Chest', 'gems', 2, 'spend-replay-1'), 201);
      const again = await purchase(p, 'Silver Chest', 'gems', 2, 'spend-replay-1');
      expect(ok(again, 201).data.map((c: { id: string }) => c.id)).toEqual(first.data.map((c: { id: string }) => c.id));
      expect(await spent(p)).toEqual({ day: 30, month: 30 });
      ok(await purchase(p, 'Silver Chest', 'gems', 2), 201);
      expect(await balance(p, 'gems')).toBe('440.00');

      expectLimitReached(await purchase(p, 'Silver Chest', 'gems'), 'day', PER_DAY, 60);
      expect(await balance(p, 'gems')).toBe('440.00');
      expect((await gemsLedger(p)).map((l) => l.delta)).toEqual(['-30.00', '-30.00']);
      // Free currencies are not limited.
      ok(await purchase(p, 'Wooden Chest', 'coins'), 201);
      const after = await limits(p);
      expect(after.map((l) => [l.id, l.attributes.spent, l.attributes.remaining])).toEqual([
        ['day', 60, 0],
        ['month', 60, 140],
      ]);
    },
  );

  it('limits do not hold adults, other countries; an unknown birth year or country is held to them', { timeout: 180_000 }, async () => {
    const adult = await player({ country: 'DE', birth_year: ADULT });
    const elsewhere = await player({ country: 'US', birth_year: MINOR });
    for (const p of [adult, elsewhere]) {
      expect(await limits(p)).toEqual([]);
      ok(await purchase(p, 'Golden Chest', 'gems', 2), 201); // 100 > 60
      expect(await balance(p, 'gems')).toBe('400.00');
    }
    const noBirthYear = await player({ country: 'DE' });
    const noCountry = await player({ birth_year: MINOR });
    for (const p of [noBirthYear, noCountry]) {
      expect((await limits(p)).map((l) => l.id)).toEqual(['day', 'month']);
      expectLimitReached(await purchase(p, 'Golden Chest', 'gems', 2), 'day', PER_DAY, 0);
      expect(await balance(p, 'gems')).toBe('500.00');
    }
  });

  it(
    'N purchases at once whose total passes the limit: exactly those that fit pass, the ledger agrees, spent never exceeds the limit',
    { timeout: 180_000 },
    async () => {
      const p = await player({ country: 'DE', birth_year: MINOR });
      const answers = await Promise.all(Array.from({ length: 8 }, () => purchase(p, 'Silver Chest', 'gems')));
      const statuses = answers.map((r) => r.statusCode).sort();
      expect(statuses).toEqual([201, 201, 201, 201, 403, 403, 403, 403]);
      for (const r of answers.filter((a) => a.statusCode === 403)) expectError(r, 403, 'spend_limit_reached');
      const ledger = await gemsLedger(p);
      expect(ledger).toHaveLength(4);
      expect(ledger.reduce((sum, l) => sum + Number(l.delta), 0)).toBe(-60);
      expect(await balance(p, 'gems')).toBe('440.00');
      expect(await spent(p)).toEqual({ day: 60, month: 60 });
    },
  );

  it('a refused debit (insufficient funds) releases its reservation', { timeout: 180_000 }, async () => {
    const p = await player({ country: 'DE', birth_year: MINOR }, 20);
    expectError(await purchase(p, 'Golden Chest', 'gems'), 409, 'insufficient_funds');
    expect(await spent(p)).toEqual({ day: 0, month: 0 });
    const failed = await stack.services.chests!.deps.pool.query<{ status: string }>('SELECT status FROM payments WHERE player_id = $1', [p.id]);
    expect(failed.rows).toEqual([{ status: 'failed' }]);
    await grantCurrency(stack, app.appId, p.id, 'gems', '100');
    ok(await purchase(p, 'Silver Chest', 'gems', 4), 201); // 60: the whole day's limit is still there
    expect(await spent(p)).toEqual({ day: 60, month: 60 });
  });

  it('a reservation left by a saga that crashed after recording its payment is released by the payments sweeper', { timeout: 180_000 }, async () => {
    const p = await player({ country: 'DE', birth_year: MINOR });
    // As a replica that died between the record (the reservation) and the wallet's debit leaves it.
    await stack.services.chests!.deps.pool.query(
      `INSERT INTO payments (id, kind, app_id, player_id, currency, amount, status, chest_type_id, quantity)
       VALUES (gen_random_uuid(), 'purchase', $1, $2, 'gems', 60, 'pending', $3, 4)`,
      [app.appId, p.id, ids['Silver Chest']!],
    );
    expect(await spent(p)).toEqual({ day: 60, month: 60 });
    expectLimitReached(await purchase(p, 'Silver Chest', 'gems'), 'day', PER_DAY, 60);
    await eventually(async () => expect(await spent(p)).toEqual({ day: 0, month: 0 }), 20_000);
    ok(await purchase(p, 'Silver Chest', 'gems', 4), 201);
    expect(await balance(p, 'gems')).toBe('440.00');
  });

  it(
    'a paid key and a paid timer skip count; a batch that cannot fit debits nothing; the day resets at UTC midnight (payments backdated)',
    { timeout: 180_000 },
    async () => {
      const p = await player({ country: 'DE', birth_year: MINOR });
      const buyWithCoins = async (chest: string) => ok(await purchase(p, chest, 'coins'), 201).data[0].id as string;
      const [vault1, vault2, hourglass] = [
        await buyWithCoins('Vault Chest'),
        await buyWithCoins('Vault Chest'),
        await buyWithCoins('Hourglass Chest'),
      ];

      ok(await purchase(p, 'Silver Chest', 'gems', 3), 201); // 45
      ok(await call(stack, 'POST', `/api/v1/chests/${vault1}/open`, p)); // 1 vault_key
      expect(await spent(p)).toEqual({ day: 46, month: 46 });

      // Skipping the whole hour costs 60 gems: 46 + 60 > 60.
      const skip = () =>
        call(stack, 'POST', `/api/v1/chests/${hourglass}/unlock`, p, { payload: { data: { type: 'unlock', attributes: { skip_with: 'gems' } } } });
      expectLimitReached(await skip(), 'day', PER_DAY, 46);
      expect(await balance(p, 'gems')).toBe('455.00');

      // The next UTC day: yesterday's payments count for the month only.
      await backdate(p);
      const now = new Date();
      const sameMonth = new Date(now.getTime() - 86_400_000).getUTCMonth() === now.getUTCMonth();
      expect(await spent(p)).toEqual({ day: 0, month: sameMonth ? 46 : 0 });
      expect(ok(await skip()).data.meta.lock).toMatchObject({ state: 'unlocked' });
      expect(await balance(p, 'gems')).toBe('395.00');
      expect(await spent(p)).toEqual({ day: 60, month: sameMonth ? 106 : 60 });

      // A batch whose paid key does not fit: refused, pointed at the chest, no key debited.
      const batch = await call(stack, 'POST', '/api/v1/chests/open', p, { payload: { data: [{ type: 'chest', id: vault2 }] } });
      const error = expectLimitReached(batch, 'day', PER_DAY, 60);
      expect(error.source?.pointer).toBe('/data/0/id');
      expect(await balance(p, 'vault_key')).toBe('2.00');
    },
  );
});
