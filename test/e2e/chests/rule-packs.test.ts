/**
 * Rule packs (docs/design.md §7, docs/content.md "Rule packs") end to end, through the gateway against
 * the real services, Postgres, NATS and Redis. An app whose content makes gems paid, sets no gate
 * of its own and applies the BE, BR and CN packs: Belgium blocked, Brazil under 18 and China
 * under 8 refused; minors in China are held to CN's limits in CNY paid at the stores
 * (test/e2e/store/money-limits.test.ts), which gems spent on chests do not count; every refusal
 * names the pack's rule (`meta.rule`), and the JP pack refuses a complete gacha at load.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, readContentFile, type AppContent } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { grantCurrency } from '../../support/grant-currency.js';
import { call, newPlayer, ok, type Player } from '../../security/support/tenants.js';

const THIS_YEAR = new Date().getUTCFullYear();

/** The demo content with gems paid, no gate of its own, and the BE, BR and CN rule packs. */
function packedContent(): AppContent {
  const c = readContentFile();
  return {
    ...c,
    compliance: { paid_currencies: ['gems'], blocked_regions: [], forbid_complete_gacha: false, rule_packs: ['BE', 'BR', 'CN'] },
  };
}

let stack: TestStack;
let app: { appId: string; key: string; secretKey: string };
let golden = '';

beforeAll(async () => {
  stack = await startStack();
  const created = await stack.bus.request(
    AdminCreateApp,
    { name: 'Rule packs', content: packedContent() },
    { requestId: `packs-${randomBytes(4).toString('hex')}` },
  );
  app = { appId: created.appId, key: created.publishableKey, secretKey: created.secretKey };
  await eventually(async () => {
    const data = ok(await call(stack, 'GET', '/api/v1/chests?page[limit]=100', app)).data as { id: string; attributes: { name: string } }[];
    golden = data.find((c) => c.attributes.name === 'Golden Chest')!.id;
  }, 20_000);
}, 90_000);

afterAll(async () => stack?.close());

/** A player of the app who declared a country and birth year, with 500 gems. */
async function player(country: string, age: number): Promise<Player> {
  const p = await newPlayer(stack, app.key);
  ok(
    await call(stack, 'PATCH', '/api/v1/players/me', p, {
      payload: { data: { type: 'player', attributes: { country, birth_year: THIS_YEAR - age - 1 } } },
    }),
  );
  await eventually(async () => expect(await gems(p)).toBe('15.00'), 20_000);
  await grantCurrency(stack, app.appId, p.id, 'gems', '485');
  return p;
}

async function gems(p: Player): Promise<string> {
  const data = ok(await call(stack, 'GET', '/api/v1/currencies', p)).data as { attributes: { code: string; balance: { amount: string } } }[];
  return data.find((c) => c.attributes.code === 'gems')!.attributes.balance.amount;
}

const buyGolden = (p: Player, quantity: number) =>
  call(stack, 'POST', `/api/v1/chests/${golden}/purchase`, p, {
    payload: { data: { type: 'purchase', attributes: { currency: 'gems', quantity } } },
  });

/** The refusal's meta, after checking its status and code. */
function refusal(res: Awaited<ReturnType<typeof buyGolden>>, status: number, code: string) {
  expectError(res, status, code);
  return res.json().errors[0].meta as Record<string, unknown>;
}

describe('rule packs through the stack', () => {
  it('blocks Belgium, Brazil under 18 and China under 8, naming each pack rule; nothing is debited', async () => {
    const be = await player('BE', 30);
    expect(refusal(await buyGolden(be, 1), 403, 'blocked_in_region')).toMatchObject({
      reason: 'country_blocked',
      rule: { pack: 'BE', rule: 'paid_random_items_are_gambling', source: expect.stringContaining('Gaming Commission') },
    });
    const br = await player('BR', 15);
    expect(refusal(await buyGolden(br, 1), 403, 'age_restricted')).toMatchObject({
      reason: 'under_min_age',
      min_age: 18,
      rule: { pack: 'BR', rule: 'no_paid_random_items_for_minors' },
    });
    const child = await player('CN', 6);
    expect(refusal(await buyGolden(child, 1), 403, 'age_restricted')).toMatchObject({
      min_age: 8,
      rule: { pack: 'CN', rule: 'no_payments_under_8' },
    });
    for (const p of [be, br, child]) expect(await gems(p)).toBe('500.00');
    // An adult in Brazil, and a minor where no pack applies, buy as usual.
    ok(await buyGolden(await player('BR', 30), 1), 201);
    ok(await buyGolden(await player('DE', 15), 2), 201);
  });

  it("shows a 14-year-old in China CN's limits in CNY (store payments) with the rule; gems spent on chests do not count against them", async () => {
    const p = await player('CN', 14);
    const limits = async (who: Player) => {
      const res = await call(stack, 'GET', '/api/v1/players/me/limits', who);
      expectJsonApi(res.json());
      return ok(res).data as { id: string; attributes: Record<string, unknown> }[];
    };
    const rule = { pack: 'CN', rule: 'minor_spend_limits_8_to_15', source: expect.stringContaining('NPPA') };
    const expected = (spent: number) => [
      expect.objectContaining({
        id: 'CNY-month',
        attributes: expect.objectContaining({ period: 'month', limit: 200, spent, money: 'CNY', rule }),
      }),
      expect.objectContaining({
        id: 'CNY-payment',
        attributes: { period: 'payment', limit: 50, spent: 0, remaining: 50, resets_at: null, money: 'CNY', rule },
      }),
    ];
    expect(await limits(p)).toEqual(expected(0));
    // Two golden chests (100 gems) in one payment, then four more: paid currency on chests is not money at the stores.
    ok(await buyGolden(p, 2), 201);
    for (let i = 0; i < 4; i++) ok(await buyGolden(p, 1), 201);
    expect(await gems(p)).toBe('200.00');
    expect(await limits(p)).toEqual(expected(0));
    // An adult in China is held to nothing.
    expect(await limits(await player('CN', 30))).toEqual([]);
  });

  it('refuses content that makes a complete gacha under the JP pack, naming its rule', async () => {
    const content = packedContent();
    content.compliance = { ...content.compliance!, rule_packs: ['JP'] };
    // The forest's set (it has a completion reward) only from the gems-only golden chest.
    for (const ch of content.chests)
      if (ch.id !== 'golden-chest') ch.rules.pools = ch.rules.pools.filter((p) => !('collection' in p) || p.collection !== 'enchanted-forest');
    const res = await stack.inject({
      method: 'POST',
      url: '/api/v1/admin/content',
      headers: { apikey: app.secretKey, 'content-type': 'application/json', accept: 'application/vnd.api+json' },
      payload: content as object,
    });
    expect(refusal(res, 422, 'complete_gacha')).toMatchObject({
      collection: 'enchanted-forest',
      rule: { pack: 'JP', rule: 'no_complete_gacha', source: expect.stringContaining('Consumer Affairs Agency') },
    });
  });
});
