import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, readContentFile } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { expectError as expectJsonApiError, expectJsonApi } from '../support/jsonapi-schema.js';
import { call, createOtherApp, expectError, newPlayer, ok, snapshot, type Player } from './support/tenants.js';

// Currency is granted by the studio (docs/design.md §6): a player can never credit a paid currency
// (the issue: 100,000 gems with a player's own token), nor a free one unless the app's content
// lets players credit; the studio grants any currency with its secret key, once per reference.
// All through the gateway, against the real services.

let stack: TestStack;
/** B: a second app whose content is the demo's (players may credit free currencies; gems are paid). */
let B: { appId: string; key: string; secretKey: string };
/** C: a studio's own content that says nothing about player credits (the default: refused). */
let C: { appId: string; key: string; secretKey: string };
let demo: Player, b1: Player, b2: Player, c1: Player;

/** A player's balance of each currency by code, through the API. */
const currencyIdOf = async (p: Player, code: string): Promise<string> =>
  ok(await call(stack, 'GET', '/api/v1/currencies', p)).data.find((c: { attributes: { code: string } }) => c.attributes.code === code).id;

/** Every ledger row of a player (the wallet's own table: what the API would never show an attacker). */
const ledgerOf = async (playerId: string) =>
  (
    await stack.services.wallet!.deps.pool.query<{ id: string; delta: string; reason: string }>(
      'SELECT id::text, delta::text, reason FROM ledger WHERE player_id = $1 ORDER BY id',
      [playerId],
    )
  ).rows;

/** The spec's credit endpoint, plain JSON, on the /api/v1 path or the unprefixed alias. */
const playerCredit = (p: Player, currencyId: string, amount: unknown, opts: { alias?: boolean; key?: string; apiKey?: string } = {}) =>
  call(
    stack,
    'POST',
    `${opts.alias ? '' : '/api/v1'}/currencies/${currencyId}/credit`,
    { key: opts.apiKey ?? p.key, token: p.token },
    {
      payload: { amount },
      json: true,
      headers: opts.key ? { 'idempotency-key': opts.key } : {},
    },
  );

/** The studio's grant with an app's key (and, for the attacks, anything else in the headers). */
const studioGrant = (apiKey: string, playerId: string, attributes: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(stack, 'POST', `/api/v1/admin/players/${playerId}/credits`, { key: apiKey }, { payload: { data: { type: 'credit', attributes } }, headers });

beforeAll(async () => {
  stack = await startStack();
  B = await createOtherApp(stack);
  const { player_credit_allowed: _allowed, ...players } = readContentFile().players;
  const created = await stack.bus.request(
    AdminCreateApp,
    // The content a studio writes for itself: no player_credit_allowed (the schema's default applies).
    { name: 'Studio game', content: { ...readContentFile(), players } as never },
    { requestId: `sec-${randomBytes(4).toString('hex')}` },
  );
  C = { appId: created.appId, key: created.publishableKey, secretKey: created.secretKey };
  [demo, b1, b2, c1] = await Promise.all([newPlayer(stack, stack.apiKey), newPlayer(stack, B.key), newPlayer(stack, B.key), newPlayer(stack, C.key)]);
  // Registration's credits have landed for every player.
  for (const p of [demo, b1, b2, c1]) await eventually(async () => expect(await ledgerOf(p.id)).toHaveLength(4));
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

describe('a player credits a paid currency', () => {
  it('is refused 403 paid_currency on both paths, whatever the amount, key or Idempotency-Key, and nothing changes', async () => {
    const gems = await currencyIdOf(demo, 'gems');
    const before = await snapshot(stack, demo);
    const ledger = await ledgerOf(demo.id);
    for (const alias of [false, true]) {
      for (const amount of ['100000', '10000', '1', '0.01']) {
        const res = await playerCredit(demo, gems, amount, { alias });
        expectJsonApiError(res, 403, 'paid_currency');
        expect(res.json().errors[0].detail).toContain('/api/v1/admin/players/{player_id}/credits');
      }
      expectJsonApiError(await playerCredit(demo, gems, '100000', { alias, key: randomUUID() }), 403, 'paid_currency');
    }
    // App B's studio key with B's player token: the player endpoint is not a way to paid currency either.
    expectJsonApiError(await playerCredit(b1, await currencyIdOf(b1, 'gems'), '100000', { apiKey: B.secretKey }), 403, 'paid_currency');
    expect(await snapshot(stack, demo)).toEqual(before);
    expect(await ledgerOf(demo.id)).toEqual(ledger);
    // The spec's example still works in the demo app: a free currency, with the player's own key.
    const coins = await currencyIdOf(demo, 'coins');
    const credited = await playerCredit(demo, coins, '10.50');
    expect(credited.statusCode, credited.body).toBe(200);
    expect(credited.json()).toEqual({ data: { balance: { amount: (Number(before.balances.coins) + 10.5).toFixed(2) } } });
  });
});

describe("an app whose content does not let players credit (the default outside the demo's)", () => {
  it('refuses every player credit 403 player_credit_disabled, free currencies included, and nothing changes', async () => {
    const before = await snapshot(stack, c1);
    const ledger = await ledgerOf(c1.id);
    for (const code of ['coins', 'vault_key']) {
      const id = await currencyIdOf(c1, code);
      for (const alias of [false, true]) expectJsonApiError(await playerCredit(c1, id, '1', { alias }), 403, 'player_credit_disabled');
    }
    // A paid currency stays refused too (the content switch comes first: nothing to learn).
    expectJsonApiError(await playerCredit(c1, await currencyIdOf(c1, 'gems'), '100000'), 403);
    expect(await snapshot(stack, c1)).toEqual(before);
    expect(await ledgerOf(c1.id)).toEqual(ledger);
  });
});

describe("the studio's grant", () => {
  it('grants a paid currency with the secret key once per reference: 201, a repeat 200 replayed, another body 409', async () => {
    const before = await snapshot(stack, b1);
    const reference = `GPA.${randomUUID()}`;
    const first = await studioGrant(B.secretKey, b1.id, { currency: 'gems', amount: '100', reference });
    expect(first.statusCode, first.body).toBe(201);
    expectJsonApi(first.json());
    const balance = (Number(before.balances.gems) + 100).toFixed(2);
    expect(first.json().data).toEqual({ type: 'balance', id: 'gems', attributes: { currency: 'gems', amount: balance } });
    expect(first.json().meta.replayed).toBe(false);

    const again = await studioGrant(B.secretKey, b1.id, { currency: 'gems', amount: '100.00', reference });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toEqual(first.json().data);
    expect(again.json().meta.replayed).toBe(true);

    for (const [who, attributes] of [
      [b1, { currency: 'gems', amount: '1000', reference }],
      [b1, { currency: 'coins', amount: '100', reference }],
      [b2, { currency: 'gems', amount: '100', reference }],
    ] as const) {
      expectJsonApiError(await studioGrant(B.secretKey, who.id, attributes), 409, 'reference_reused');
    }
    const after = await snapshot(stack, b1);
    expect(after).toEqual({ ...before, balances: { ...before.balances, gems: balance } });
    const grants = (await ledgerOf(b1.id)).filter((r) => r.reason === 'studio_grant');
    expect(grants.map((r) => r.delta)).toEqual(['100.00']);
    expect((await ledgerOf(b2.id)).filter((r) => r.reason === 'studio_grant')).toEqual([]);
  });

  it('is closed to players: a publishable key 403, a Bearer token 401, another app 404, and nothing changes', async () => {
    const before = await Promise.all([snapshot(stack, b1), snapshot(stack, demo)]);
    const ledgers = await Promise.all([ledgerOf(b1.id), ledgerOf(demo.id)]);
    const attributes = () => ({ currency: 'gems', amount: '100000', reference: `r-${randomUUID()}` });
    // The game client's own key, with or without the player's token.
    expectError(await studioGrant(B.key, b1.id, attributes()), 403, 'secret_key_required');
    expectError(await studioGrant(B.key, b1.id, attributes(), { authorization: `Bearer ${b1.token}` }), 401, 'token_not_accepted');
    expectError(await studioGrant(B.secretKey, b1.id, attributes(), { authorization: `Bearer ${b1.token}` }), 401, 'token_not_accepted');
    // One studio's key cannot reach another app's player.
    expectError(await studioGrant(B.secretKey, demo.id, attributes()), 404, 'player_not_found');
    expectError(await studioGrant(C.secretKey, b1.id, attributes()), 404, 'player_not_found');
    expect(await Promise.all([snapshot(stack, b1), snapshot(stack, demo)])).toEqual(before);
    expect(await Promise.all([ledgerOf(b1.id), ledgerOf(demo.id)])).toEqual(ledgers);
  });

  it('credits once when the same reference arrives 30 times at once', async () => {
    const before = await snapshot(stack, b2);
    const reference = `order-${randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => studioGrant(B.secretKey, b2.id, { currency: 'gems', amount: '12.34', reference })),
    );
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(29);
    const balance = (Number(before.balances.gems) + 12.34).toFixed(2);
    for (const a of answers) expect(a.json().data.attributes.amount).toBe(balance);
    expect((await snapshot(stack, b2)).balances.gems).toBe(balance);
    expect((await ledgerOf(b2.id)).filter((r) => r.reason === 'studio_grant')).toHaveLength(1);
  });

  it('is recorded in the audit log with the player and the outcome', async () => {
    const reference = `audit-${randomUUID()}`;
    expect((await studioGrant(C.secretKey, c1.id, { currency: 'gems', amount: '5', reference })).statusCode).toBe(201);
    expect((await studioGrant(C.secretKey, c1.id, { currency: 'gems', amount: '6', reference })).statusCode).toBe(409);
    await eventually(async () => {
      const entries = ok(await call(stack, 'GET', '/api/v1/admin/audit', { key: C.secretKey })).data.map(
        (e: { attributes: { action: string; target: string; status: number } }) => e.attributes,
      );
      const grants = entries.filter(
        (e: { action: string; target: string }) => e.action === 'POST /api/v1/admin/players/{id}/credits' && e.target === c1.id,
      );
      expect(grants.map((e: { target: string; status: number }) => `${e.target} ${e.status}`)).toEqual([`${c1.id} 409`, `${c1.id} 201`]);
    });
  });
});
