/**
 * Spend limits in money (docs/store.md "Spend limits in money", docs/compliance.md) end to end,
 * through the gateway against the real services, Postgres, NATS and Redis. The demo content
 * applies the CN rule pack, whose limits count CNY paid in verified store transactions (8–15: 50 a
 * payment, 200 a month; under 8: no payment), with `money_rates` {CNY: {USD: 7.1, EUR: 7.7}}. A
 * second app shows that store money and chest spending in paid currency are counted apart.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, readContentFile, type AppContent } from '@ccs/shared';
import { eventually, jsonApiHeaders } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { registerThroughGateway, type RegisteredPlayer } from '../../support/register.js';
import {
  appleGems,
  balances,
  googleGems,
  newPlayer,
  postAppleNotification,
  startStoreStack,
  submitApple,
  submitGoogle,
  type StoreStack,
} from '../../support/store/store-stack.js';

const THIS_YEAR = new Date().getUTCFullYear();
/** 15 all this year (an age is counted as surely reached: the birthday is assumed still to come). */
const AGED_15 = THIS_YEAR - 16;
const ADULT = THIS_YEAR - 30;
const RULE_8_TO_15 = { pack: 'CN', rule: 'minor_spend_limits_8_to_15', source: expect.stringContaining('NPPA') };

let s: StoreStack;
beforeAll(async () => {
  s = await startStoreStack();
}, 90_000);
afterAll(async () => s?.close());

/** An App Store transaction of 500 gems for `p` at `amount` (major units) of `currency`. */
const appleAt = (p: RegisteredPlayer, amount: number, currency = 'CNY') => appleGems(s, p.id, { price: Math.round(amount * 1000), currency });

const minorInChina = () => newPlayer(s, { country: 'CN', birth_year: AGED_15 });

/** The next UTC midnight and the first of next month, as ISO strings. */
function periodEnds(now = new Date()) {
  return {
    day: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString(),
    month: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
  };
}

interface Limit {
  id: string;
  attributes: { period: string; limit: number; spent: number; remaining: number; resets_at: string | null; money?: string; rule?: unknown };
}
async function limits(p: RegisteredPlayer, apiKey = s.stack.apiKey): Promise<Limit[]> {
  const res = await s.stack.inject({ method: 'GET', url: '/api/v1/players/me/limits', headers: jsonApiHeaders(apiKey, p.token) });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expectJsonApi(body);
  return body.data;
}
const standing = async (p: RegisteredPlayer, apiKey?: string) =>
  Object.fromEntries((await limits(p, apiKey)).map((l) => [l.id, [l.attributes.spent, l.attributes.remaining]]));

const gems = async (p: RegisteredPlayer) => Number((await balances(s, p.token)).gems);

/** The store's rows of a transaction (none when it was refused). */
const storeRows = async (transactionId: string) =>
  (await s.stack.services.store!.deps.pool.query('SELECT state FROM purchases WHERE transaction_id = $1', [transactionId])).rows;
const transactionIdOf = (jws: string): string => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()).transactionId;

function expectReached(res: Awaited<ReturnType<typeof submitApple>>, limit: Record<string, unknown>, rule: unknown = RULE_8_TO_15) {
  const [error] = expectError(res, 403, 'spend_limit_reached');
  const meta = (error as unknown as { meta: Record<string, unknown> }).meta;
  expect(meta.limit).toEqual(limit);
  expect(meta.rule).toEqual(rule);
  return meta;
}

describe('spend limits in money', () => {
  it(
    'a minor in China pays up to 200 CNY a month, USD counted at the content rate; the next payment is refused with meta.limit and nothing granted; /players/me/limits shows the standing',
    { timeout: 180_000 },
    async () => {
      const p = await minorInChina();
      const ends = periodEnds();
      expect(await limits(p)).toEqual([
        {
          type: 'spend_limit',
          id: 'CNY-month',
          attributes: { period: 'month', limit: 200, spent: 0, remaining: 200, resets_at: ends.month, money: 'CNY', rule: RULE_8_TO_15 },
          relationships: {},
        },
        {
          type: 'spend_limit',
          id: 'CNY-payment',
          attributes: { period: 'payment', limit: 50, spent: 0, remaining: 50, resets_at: null, money: 'CNY', rule: RULE_8_TO_15 },
          relationships: {},
        },
      ]);
      const first = await appleAt(p, 50);
      expect((await submitApple(s, p.token, first)).statusCode).toBe(201);
      for (const amount of [50, 50]) expect((await submitApple(s, p.token, await appleAt(p, amount))).statusCode).toBe(201);
      // 7 USD at 7.1 CNY: 49.7 CNY, 199.7 in all.
      expect((await submitApple(s, p.token, await appleAt(p, 7, 'USD'))).statusCode).toBe(201);
      expect(await standing(p)).toEqual({ 'CNY-month': [199.7, 0.3], 'CNY-payment': [0, 50] });
      const before = await gems(p);

      const over = await appleAt(p, 1);
      const meta = expectReached(await submitApple(s, p.token, over), {
        period: 'month',
        limit: 200,
        spent: 199.7,
        resets_at: ends.month,
        money: 'CNY',
      });
      expect(meta.price).toEqual({ amount: '1', currency: 'CNY' });
      expect(await gems(p)).toBe(before);
      expect(await storeRows(transactionIdOf(over))).toEqual([]);
      // What was granted stays granted: its replay answers as before.
      const replay = await submitApple(s, p.token, first);
      expect(replay.statusCode, replay.body).toBe(200);
      expect(replay.json().meta.replayed).toBe(true);
      expect(await standing(p)).toEqual({ 'CNY-month': [199.7, 0.3], 'CNY-payment': [0, 50] });
    },
  );

  it('a payment above the cap per payment is refused whatever was spent; EUR counts at its rate', { timeout: 180_000 }, async () => {
    const p = await minorInChina();
    const before = await gems(p);
    expectReached(await submitApple(s, p.token, await appleAt(p, 50.01)), {
      period: 'payment',
      limit: 50,
      spent: 0,
      resets_at: null,
      money: 'CNY',
    });
    expect(await gems(p)).toBe(before);
    // 6.49 EUR at 7.7: 49.97 CNY, under the cap; 6.5 EUR would be 50.05.
    expect((await submitApple(s, p.token, await appleAt(p, 6.49, 'EUR'))).statusCode).toBe(201);
    expectReached(await submitApple(s, p.token, await appleAt(p, 6.5, 'EUR')), {
      period: 'payment',
      limit: 50,
      spent: 0,
      resets_at: null,
      money: 'CNY',
    });
    expect(await standing(p)).toEqual({ 'CNY-month': [49.97, 150.03], 'CNY-payment': [0, 50] });
  });

  it('a currency without a rate, or a transaction without a price, cannot be counted: 403 spend_limit_unverifiable, nothing granted', async () => {
    const p = await minorInChina();
    const before = await gems(p);
    const gbp = await submitApple(s, p.token, await appleAt(p, 5, 'GBP'));
    const [error] = expectError(gbp, 403, 'spend_limit_unverifiable');
    expect((error as unknown as { meta: unknown }).meta).toEqual({
      currency: 'GBP',
      limit: { period: 'month', limit: 200, money: 'CNY' },
      rule: RULE_8_TO_15,
    });
    const unpriced = await submitApple(s, p.token, await appleGems(s, p.id, { price: undefined, currency: undefined }));
    const [noPrice] = expectError(unpriced, 403, 'spend_limit_unverifiable');
    expect((noPrice as unknown as { meta: { currency: unknown } }).meta.currency).toBeNull();
    expect(await gems(p)).toBe(before);
    expect(await standing(p)).toEqual({ 'CNY-month': [0, 200], 'CNY-payment': [0, 50] });
  });

  it('an adult is not limited; under 8, or with no birth year declared, no payment passes', { timeout: 180_000 }, async () => {
    const adult = await newPlayer(s, { country: 'CN', birth_year: ADULT });
    expect(await limits(adult)).toEqual([]);
    for (const [amount, currency] of [
      [500, 'CNY'],
      [5, 'GBP'],
    ] as const)
      expect((await submitApple(s, adult.token, await appleGems(s, adult.id, { price: amount * 1000, currency }))).statusCode).toBe(201);

    const noPayments = { pack: 'CN', rule: 'no_store_payments_under_8', source: expect.stringContaining('NPPA') };
    for (const declared of [{ country: 'CN', birth_year: THIS_YEAR - 7 }, { country: 'CN' }, {}]) {
      const p = await newPlayer(s, declared);
      expect((await limits(p)).find((l) => l.id === 'CNY-payment')?.attributes).toMatchObject({ limit: 0, rule: noPayments });
      expectReached(
        await submitApple(s, p.token, await appleAt(p, 1)),
        { period: 'payment', limit: 0, spent: 0, resets_at: null, money: 'CNY' },
        noPayments,
      );
    }
  });

  it('a refunded transaction no longer counts: a payment refused at the limit passes once a refund makes room', { timeout: 180_000 }, async () => {
    const p = await minorInChina();
    const paid = await Promise.all([50, 50, 50, 50].map((a) => appleAt(p, a)));
    for (const jws of paid) expect((await submitApple(s, p.token, jws)).statusCode).toBe(201);
    const refused = await appleAt(p, 10);
    expectError(await submitApple(s, p.token, refused), 403, 'spend_limit_reached');

    const refund = await postAppleNotification(s, await s.pki.signNotification({ notificationType: 'REFUND', signedTransactionInfo: paid[0]! }));
    expect(refund.statusCode, refund.body).toBe(200);
    await eventually(async () => expect(await standing(p)).toEqual({ 'CNY-month': [150, 50], 'CNY-payment': [0, 50] }), 20_000);
    // The refused transaction was not recorded: submitted again once it fits, it is granted then.
    const again = await submitApple(s, p.token, refused);
    expect(again.statusCode, again.body).toBe(201);
    expect(await standing(p)).toEqual({ 'CNY-month': [160, 40], 'CNY-payment': [0, 50] });
  });

  it('payments racing at the limit: exactly those that fit are granted', { timeout: 180_000 }, async () => {
    const p = await minorInChina();
    const before = await gems(p);
    const jws = await Promise.all(Array.from({ length: 6 }, () => appleAt(p, 50)));
    const answers = await Promise.all(jws.map((j) => submitApple(s, p.token, j)));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([201, 201, 201, 201, 403, 403]);
    for (const r of answers.filter((a) => a.statusCode === 403)) expectError(r, 403, 'spend_limit_reached');
    expect(await gems(p)).toBe(before + 4 * 500);
    expect(await standing(p)).toEqual({ 'CNY-month': [200, 0], 'CNY-payment': [0, 50] });
  });

  it(
    'a Google Play purchase refused by a limit is neither recorded nor consumed; one that fits is granted and consumed',
    { timeout: 180_000 },
    async () => {
      const p = await minorInChina();
      const refused = googleGems(s, p.id, { price: '60.00', currency: 'CNY' });
      expectReached(await submitGoogle(s, p.token, 'gems_500', refused.token), {
        period: 'payment',
        limit: 50,
        spent: 0,
        resets_at: null,
        money: 'CNY',
      });
      const fits = googleGems(s, p.id, { price: '40.00', currency: 'CNY' });
      expect((await submitGoogle(s, p.token, 'gems_500', fits.token)).statusCode).toBe(201);
      await eventually(async () => expect(s.google.purchase(fits.packageName, fits.productId, fits.token)?.consumed).toBe(true), 20_000);
      expect(s.google.purchase(refused.packageName, refused.productId, refused.token)).toMatchObject({ consumed: false, acknowledged: false });
      expect(await storeRows(refused.orderId!)).toEqual([]);
      expect(await standing(p)).toEqual({ 'CNY-month': [40, 160], 'CNY-payment': [0, 50] });
    },
  );
});

describe('spend limits in money and in units of paid currency', () => {
  /** The demo content with gems paid and no region or age gate: the CN pack, and a limit of 100 gems a day for minors in China. */
  function content(): AppContent {
    const c = readContentFile();
    return {
      ...c,
      compliance: {
        ...c.compliance!,
        blocked_regions: [],
        min_age: undefined,
        spend_limits: [{ max_age: 17, per_day: 100, countries: ['CN'] }],
        rule_packs: ['CN'],
      },
    };
  }

  it(
    'count apart: store money does not count against the limit in gems, chest purchases in gems not against the limits in CNY',
    { timeout: 180_000 },
    async () => {
      const created = await s.stack.bus.request(
        AdminCreateApp,
        { name: 'Money and units', content: content() },
        { requestId: `money-${randomBytes(4).toString('hex')}` },
      );
      const key = created.publishableKey;
      const p = await registerThroughGateway(s.stack, key);
      const patched = await s.stack.inject({
        method: 'PATCH',
        url: '/api/v1/players/me',
        headers: jsonApiHeaders(key, p.token),
        payload: { data: { type: 'player', attributes: { country: 'CN', birth_year: AGED_15 } } },
      });
      expect(patched.statusCode, patched.body).toBe(200);
      expect((await limits(p, key)).map((l) => l.id)).toEqual(['day', 'CNY-month', 'CNY-payment']);

      // The store takes the new app's content shortly after it was created.
      const jws = await appleAt(p, 50);
      await eventually(async () => {
        const res = await submitApple(s, p.token, jws, key);
        expect(res.statusCode, res.body).toBe(201);
      }, 20_000);
      expect(await standing(p, key)).toEqual({ day: [0, 100], 'CNY-month': [50, 150], 'CNY-payment': [0, 50] });

      const chests = await s.stack.inject({ method: 'GET', url: '/api/v1/chests?page[limit]=100', headers: jsonApiHeaders(key) });
      const silver = (chests.json().data as { id: string; attributes: { name: string } }[]).find((c) => c.attributes.name === 'Silver Chest')!;
      const bought = await s.stack.inject({
        method: 'POST',
        url: `/api/v1/chests/${silver.id}/purchase`,
        headers: { ...jsonApiHeaders(key, p.token), 'idempotency-key': randomUUID() },
        payload: { data: { type: 'purchase', attributes: { currency: 'gems', quantity: 1 } } },
      });
      expect(bought.statusCode, bought.body).toBe(201);
      expect(await standing(p, key)).toEqual({ day: [15, 85], 'CNY-month': [50, 150], 'CNY-payment': [0, 50] });
    },
  );
});
