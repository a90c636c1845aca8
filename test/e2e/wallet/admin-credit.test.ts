import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, AdminCreditPlayer } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { ledgerTotals, registerPlayer, walletPool } from './support.js';

/**
 * The studio's grants of currency (POST /api/v1/admin/players/{id}/credits, wallet.v1.admin_credit):
 * any currency with the secret key, once per reference, a `studio_grant` ledger row and its
 * currency.credited event; every refusal changes nothing.
 */
describe('POST /api/v1/admin/players/{id}/credits', () => {
  let stack: TestStack;
  let game: { appId: string; publishableKey: string; secretKey: string };
  let currencies: Record<string, string>;

  beforeAll(async () => {
    stack = await startStack();
    game = await stack.bus.request(AdminCreateApp, { name: 'Granting game' }, { requestId: randomUUID() });
    const p = await registerPlayer(stack, game.publishableKey);
    currencies = await eventually(async () => {
      const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: jsonApiHeaders(game.publishableKey, p.token) });
      const data: { id: string; attributes: { code: string } }[] = res.json().data;
      expect(data.map((c) => c.attributes.code)).toContain('gems');
      return Object.fromEntries(data.map((c) => [c.attributes.code, c.id]));
    });
  });
  afterAll(async () => stack?.close());

  const body = (attributes: Record<string, unknown>, type = 'credit') => ({ data: { type, attributes } });
  const grant = (playerId: string, payload: unknown, apiKey = game.secretKey) =>
    stack.inject({
      method: 'POST',
      url: `/api/v1/admin/players/${playerId}/credits`,
      headers: { apikey: apiKey, 'content-type': 'application/vnd.api+json', accept: 'application/vnd.api+json' },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
  /** A player of the game whose registration credits (1500 coins, 15 gems) have landed. */
  const freshPlayer = async () => {
    const p = await registerPlayer(stack, game.publishableKey);
    await eventually(async () => expect((await ledgerTotals(walletPool(stack), game.appId, p.id, currencies.gems!)).balance).toBe('15.00'));
    return p;
  };
  const gems = (playerId: string) => ledgerTotals(walletPool(stack), game.appId, playerId, currencies.gems!);

  it('grants a paid currency: 201 with the balance, a studio_grant ledger row with the reference', async () => {
    const p = await freshPlayer();
    const res = await grant(p.id, body({ currency: 'gems', amount: '100', reference: 'receipt:GPA.1234-5678' }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['content-type']).toContain('application/vnd.api+json');
    expect(res.headers['cache-control']).toBe('no-store');
    const doc = res.json();
    expectJsonApi(doc);
    expect(doc).toEqual({
      data: { type: 'balance', id: 'gems', attributes: { currency: 'gems', amount: '115.00' } },
      meta: { replayed: false, player_id: p.id },
    });
    const rows = await walletPool(stack).query<{ delta: string; balance_after: string; reason: string; reference: string }>(
      `SELECT delta::text, balance_after::text, reason, reference FROM ledger WHERE app_id = $1 AND player_id = $2 AND reason = 'studio_grant'`,
      [game.appId, p.id],
    );
    expect(rows.rows).toEqual([{ delta: '100.00', balance_after: '115.00', reason: 'studio_grant', reference: 'receipt:GPA.1234-5678' }]);
    // The currency code in any case, any free currency too, with decimals.
    const coins = await grant(p.id, body({ currency: 'COINS', amount: '0.05', reference: 'order-2' }));
    expect(coins.statusCode, coins.body).toBe(201);
    expect(coins.json().data).toEqual({ type: 'balance', id: 'coins', attributes: { currency: 'coins', amount: '1500.05' } });
  });

  it('answers the first result again for the same reference (200, meta.replayed) and adds nothing', async () => {
    const p = await freshPlayer();
    const reference = `order-${randomUUID()}`;
    const first = await grant(p.id, body({ currency: 'gems', amount: '10', reference }));
    expect(first.statusCode, first.body).toBe(201);
    // Something else moves the balance in between: the repeat still answers the first result.
    expect((await grant(p.id, body({ currency: 'gems', amount: '1', reference: `${reference}-b` }))).statusCode).toBe(201);
    for (const amount of ['10', '10.00', '10.0']) {
      const again = await grant(p.id, body({ currency: 'gems', amount, reference }));
      expect(again.statusCode, again.body).toBe(200);
      expectJsonApi(again.json());
      expect(again.json()).toEqual({
        data: { type: 'balance', id: 'gems', attributes: { currency: 'gems', amount: '25.00' } },
        meta: { replayed: true, player_id: p.id },
      });
    }
    expect(await gems(p.id)).toMatchObject({ rows: 4, balance: '26.00', sum: '26.00' });
  });

  it('answers 409 reference_reused for the same reference with another player, currency or amount, and changes nothing', async () => {
    const p = await freshPlayer();
    const q = await freshPlayer();
    const reference = `order-${randomUUID()}`;
    expect((await grant(p.id, body({ currency: 'gems', amount: '5', reference }))).statusCode).toBe(201);
    for (const [who, attributes] of [
      [p.id, { currency: 'gems', amount: '6', reference }],
      [p.id, { currency: 'coins', amount: '5', reference }],
      [q.id, { currency: 'gems', amount: '5', reference }],
    ] as const) {
      const errors = expectError(await grant(who, body(attributes)), 409, 'reference_reused');
      expect(errors[0]!.source).toEqual({ pointer: '/data/attributes/reference' });
    }
    expect(await gems(p.id)).toMatchObject({ rows: 3, balance: '20.00' });
    expect(await gems(q.id)).toMatchObject({ rows: 2, balance: '15.00' });
    expect((await ledgerTotals(walletPool(stack), game.appId, p.id, currencies.coins!)).rows).toBe(2);
  });

  it('credits once for 20 concurrent grants of one reference, every answer the same balance', async () => {
    const p = await freshPlayer();
    const reference = `order-${randomUUID()}`;
    const answers = await Promise.all(Array.from({ length: 20 }, () => grant(p.id, body({ currency: 'gems', amount: '7.77', reference }))));
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(19);
    for (const a of answers) expect(a.json().data.attributes.amount).toBe('22.77');
    expect(await gems(p.id)).toMatchObject({ rows: 3, balance: '22.77', sum: '22.77' });
    const stored = await walletPool(stack).query('SELECT balance_after::text AS b FROM studio_grants WHERE app_id = $1 AND reference = $2', [
      game.appId,
      reference,
    ]);
    expect(stored.rows).toEqual([{ b: '22.77' }]);
  });

  it('answers 422 pointing at the attribute for every bad body, and changes nothing', async () => {
    const p = await freshPlayer();
    const ok = { currency: 'gems', amount: '1', reference: 'r-1' };
    const refused: [unknown, string, string][] = [
      [body({ ...ok, amount: '1.234' }), 'invalid_field', '/data/attributes/amount'],
      [body({ ...ok, amount: '-1' }), 'invalid_field', '/data/attributes/amount'],
      [body({ ...ok, amount: '1e3' }), 'invalid_field', '/data/attributes/amount'],
      [body({ ...ok, amount: 5 }), 'invalid_field', '/data/attributes/amount'],
      [body({ ...ok, amount: '' }), 'invalid_field', '/data/attributes/amount'],
      [body({ ...ok, amount: '1'.repeat(41) }), 'invalid_field', '/data/attributes/amount'],
      [body({ currency: 'gems', reference: 'r-1' }), 'invalid_field', '/data/attributes/amount'],
      [body({ ...ok, amount: '0' }), 'amount_not_positive', '/data/attributes/amount'],
      [body({ ...ok, amount: '0.00' }), 'amount_not_positive', '/data/attributes/amount'],
      [body({ ...ok, amount: '10000.01' }), 'amount_above_maximum', '/data/attributes/amount'],
      [body({ ...ok, amount: '99999999999999999999' }), 'amount_above_maximum', '/data/attributes/amount'],
      [body({ ...ok, currency: 'rubies' }), 'currency_not_found', '/data/attributes/currency'],
      [body({ ...ok, currency: 'not a code!' }), 'currency_not_found', '/data/attributes/currency'],
      [body({ ...ok, currency: '' }), 'invalid_field', '/data/attributes/currency'],
      [body({ ...ok, currency: 7 }), 'invalid_field', '/data/attributes/currency'],
      [body({ ...ok, reference: '' }), 'invalid_field', '/data/attributes/reference'],
      [body({ ...ok, reference: 'x'.repeat(201) }), 'invalid_field', '/data/attributes/reference'],
      [body({ currency: 'gems', amount: '1' }), 'invalid_field', '/data/attributes/reference'],
      [body({ ...ok, player_id: p.id }), 'invalid_field', '/data/attributes'],
      [body(ok, 'grant'), 'invalid_field', '/data/type'],
      [{ data: { type: 'credit' } }, 'invalid_field', '/data/attributes'],
    ];
    for (const [payload, code, pointer] of refused) {
      const errors = expectError(await grant(p.id, payload), 422, code);
      expect(errors[0]!.source, JSON.stringify(payload).slice(0, 200)).toEqual({ pointer });
    }
    expectError(await grant(p.id, '{"data": '), 400, 'malformed_json');
    expect(await gems(p.id)).toMatchObject({ rows: 2, balance: '15.00' });
    const claimed = await walletPool(stack).query('SELECT 1 FROM studio_grants WHERE player_id = $1', [p.id]);
    expect(claimed.rowCount).toBe(0);
    // A refused grant claimed nothing: its reference is still free.
    expect((await grant(p.id, body({ ...ok, reference: 'r-1' }))).statusCode).toBe(201);
  });

  it("answers 404 for another app's player or none, 400 for a malformed id, 403 for a publishable key", async () => {
    const mine = await freshPlayer();
    const stranger = await registerPlayer(stack);
    const payload = body({ currency: 'gems', amount: '1', reference: `r-${randomUUID()}` });
    expectError(await grant(stranger.id, payload), 404, 'player_not_found');
    expectError(await grant(randomUUID(), payload), 404, 'player_not_found');
    const errors = expectError(await grant('not-a-uuid', payload), 400, 'invalid_id');
    expect(errors[0]!.source).toEqual({ parameter: 'id' });
    expectError(await grant(mine.id, payload, game.publishableKey), 403, 'secret_key_required');
    expect(await gems(mine.id)).toMatchObject({ rows: 2, balance: '15.00' });
  });

  it('writes the currency.credited event of a grant for an app whose webhooks take it', async () => {
    const hook = await stack.inject({
      method: 'POST',
      url: '/api/v1/admin/webhooks',
      headers: { apikey: game.secretKey, 'content-type': 'application/vnd.api+json' },
      payload: { data: { type: 'webhook_endpoint', attributes: { url: 'https://hooks.example.com/ccs', events: ['currency.credited'] } } },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const p = await freshPlayer();
    const reference = `order-${randomUUID()}`;
    // The wallet's view of the app's webhooks is refreshed by a notice: wait until it writes events.
    await eventually(async () => {
      const r = await grant(p.id, body({ currency: 'gems', amount: '3', reference: `${reference}-${randomUUID()}` }));
      expect(r.statusCode).toBe(201);
      const events = await walletPool(stack).query(
        `SELECT 1 FROM outbox WHERE payload->>'type' = 'currency.credited' AND payload->>'playerId' = $1 AND payload->'data'->>'reason' = 'studio_grant'`,
        [p.id],
      );
      expect(events.rowCount).toBeGreaterThan(0);
    });
    expect((await grant(p.id, body({ currency: 'gems', amount: '4', reference }))).statusCode).toBe(201);
    const ev = await walletPool(stack).query<{ data: Record<string, string> }>(
      `SELECT payload->'data' AS data FROM outbox WHERE payload->>'type' = 'currency.credited' AND payload->'data'->>'reference' = $1`,
      [reference],
    );
    expect(ev.rows).toHaveLength(1);
    expect(ev.rows[0]!.data).toMatchObject({ player_id: p.id, currency: 'gems', amount: '4.00', reason: 'studio_grant', reference });
    // A repeat of the reference writes no second event.
    expect((await grant(p.id, body({ currency: 'gems', amount: '4', reference }))).statusCode).toBe(200);
    const after = await walletPool(stack).query(`SELECT 1 FROM outbox WHERE payload->'data'->>'reference' = $1`, [reference]);
    expect(after.rowCount).toBe(1);
  });

  it('keeps grants of one reference per app: the wallet subject refuses a reused reference whatever the caller', async () => {
    const p = await freshPlayer();
    const reference = `order-${randomUUID()}`;
    const ctx = { requestId: randomUUID(), appId: game.appId };
    const first = await stack.bus.request(AdminCreditPlayer, { appId: game.appId, playerId: p.id, currency: 'gems', amount: '2', reference }, ctx);
    expect(first).toEqual({ currency: 'gems', balance: '17.00', replayed: false });
    await expect(
      stack.bus.request(AdminCreditPlayer, { appId: game.appId, playerId: p.id, currency: 'gems', amount: '3', reference }, ctx),
    ).rejects.toMatchObject({ kind: 'conflict', code: 'reference_reused' });
  });
});
