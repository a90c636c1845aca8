import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, readContentFile } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError } from '../../support/jsonapi-schema.js';
import { deleteKeysOlderThan } from '../../../services/wallet/src/repositories/idempotency-repo.js';
import { ledgerTotals, registerPlayer, walletPool } from './support.js';

type Player = { id: string; token: string };

describe('POST /api/v1/currencies/{currency_id}/credit and POST /currencies/{currency_id}/credit', () => {
  let stack: TestStack;
  let demoAppId: string;
  let coins: string;
  let gems: string;
  let vaultKey: string;

  beforeAll(async () => {
    stack = await startStack();
    const first = await registerPlayer(stack);
    demoAppId = JSON.parse(Buffer.from(first.token.split('.')[1]!, 'base64url').toString()).app;
    const ids = await currencyIds(stack.apiKey, first.token);
    coins = ids.coins!;
    gems = ids.gems!;
    vaultKey = ids.vault_key!;
  });
  afterAll(async () => stack?.close());

  async function currencyIds(apiKey: string, token?: string): Promise<Record<string, string>> {
    return eventually(async () => {
      const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: jsonApiHeaders(apiKey, token) });
      const data: { id: string; attributes: { code: string } }[] = res.json().data;
      expect(data).toHaveLength(readContentFile().currencies.length);
      return Object.fromEntries(data.map((c) => [c.attributes.code, c.id]));
    });
  }

  const credit = (
    p: Player | undefined,
    currencyId: string,
    payload: unknown,
    opts: { key?: string; apiKey?: string; alias?: boolean; contentType?: string | null } = {},
  ) => {
    const headers: Record<string, string> = { apikey: opts.apiKey ?? stack.apiKey };
    if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json';
    if (p) headers.authorization = `Bearer ${p.token}`;
    if (opts.key !== undefined) headers['idempotency-key'] = opts.key;
    const url = `${opts.alias ? '' : '/api/v1'}/currencies/${currencyId}/credit`;
    return stack.inject({ method: 'POST', url, headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });
  };
  const balanceOf = (res: { statusCode: number; body: string; headers: Record<string, unknown> }) => {
    expect(res.statusCode, res.body).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    const body = JSON.parse(res.body);
    expect(Object.keys(body)).toEqual(['data']);
    expect(Object.keys(body.data)).toEqual(['balance']);
    return body.data.balance.amount as string;
  };
  /** A player with a known starting balance: registration grants, then nothing else. */
  const freshPlayer = async (): Promise<Player & { coins: string }> => {
    const p = await registerPlayer(stack);
    const start = await eventually(async () => {
      const t = await ledgerTotals(walletPool(stack), demoAppId, p.id, coins);
      expect(t.rows).toBe(2);
      return t.balance!;
    });
    return { ...p, coins: start };
  };

  it('credits the calling player and answers plain JSON with the new balance, two decimals', async () => {
    const p = await freshPlayer();
    expect(p.coins).toBe('1500.00');
    expect(balanceOf(await credit(p, coins, { amount: '10' }))).toBe('1510.00');
    expect(balanceOf(await credit(p, coins, { amount: '0.5' }))).toBe('1510.50');
    expect(balanceOf(await credit(p, coins, { amount: '2.25' }, { alias: true }))).toBe('1512.75');
    expect(balanceOf(await credit(p, vaultKey, { amount: '10' }, { contentType: 'application/json; charset=utf-8' }))).toBe('10.00');
    const ledger = await walletPool(stack).query<{ delta: string; balance_after: string; reason: string }>(
      'SELECT delta::text, balance_after::text, reason FROM ledger WHERE app_id = $1 AND player_id = $2 AND currency_id = $3 ORDER BY id',
      [demoAppId, p.id, coins],
    );
    const grants = ledger.rows.slice(0, 2).map((r) => `${r.reason}:${r.delta}`);
    expect(grants.sort()).toEqual(['initial_currency:1000.00', 'welcome_bonus:500.00']);
    expect(ledger.rows.slice(2)).toEqual([
      { delta: '10.00', balance_after: '1510.00', reason: 'credit' },
      { delta: '0.50', balance_after: '1510.50', reason: 'credit' },
      { delta: '2.25', balance_after: '1512.75', reason: 'credit' },
    ]);
    // Sent without an Idempotency-Key, each credit travelled under a key of the gateway's own (a
    // retry to another replica applies it once), one per request, never reported as a replay.
    const keys = await walletPool(stack).query<{ retry_key: string | null; reference: string | null }>(
      "SELECT retry_key, reference FROM ledger WHERE app_id = $1 AND player_id = $2 AND reason = 'credit'",
      [demoAppId, p.id],
    );
    expect(keys.rows).toHaveLength(4);
    expect(new Set(keys.rows.map((r) => r.retry_key)).size).toBe(4);
    for (const r of keys.rows) expect(r).toEqual({ retry_key: expect.stringMatching(/^[0-9a-f-]{36}$/), reference: null });
    expect((await credit(p, coins, { amount: '1' })).headers['idempotent-replayed']).toBeUndefined();
  });

  it('needs the apikey and a Bearer token (401), on both paths', async () => {
    const p = await registerPlayer(stack);
    for (const alias of [false, true]) {
      expectError(await credit(undefined, coins, { amount: '1' }, { alias }), 401, 'missing_token');
      expectError(await credit({ id: p.id, token: 'x.y.z' }, coins, { amount: '1' }, { alias }), 401, 'invalid_token');
      const url = `${alias ? '' : '/api/v1'}/currencies/${coins}/credit`;
      const noKey = await stack.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${p.token}` },
        payload: '{"amount":"1"}',
      });
      expectError(noKey, 401, 'missing_api_key');
    }
  });

  it('takes only application/json bodies (415 otherwise)', async () => {
    const p = await registerPlayer(stack);
    expectError(await credit(p, coins, { amount: '1' }, { contentType: 'application/vnd.api+json' }), 415, 'unsupported_media_type');
    expectError(await credit(p, coins, 'amount=1', { contentType: 'application/x-www-form-urlencoded' }), 415);
    expectError(await credit(p, coins, '{"amount":"1"}', { contentType: 'text/plain' }), 415);
    expectError(await credit(p, coins, '{"amount":"1"}', { contentType: null, alias: true }), 415);
  });

  it('answers 400 for a malformed currency id, malformed JSON or a bad Idempotency-Key', async () => {
    const p = await registerPlayer(stack);
    for (const alias of [false, true]) {
      const errors = expectError(await credit(p, 'not-a-uuid', { amount: '1' }, { alias }), 400, 'invalid_id');
      expect(errors[0]!.source).toEqual({ parameter: 'currency_id' });
    }
    expectError(await credit(p, coins, '{"amount": "1"', {}), 400, 'malformed_json');
    expectError(await credit(p, coins, { amount: '1' }, { key: 'x'.repeat(256) }), 400, 'invalid_idempotency_key');
    expectError(await credit(p, coins, { amount: '1' }, { key: 'has space' }), 400, 'invalid_idempotency_key');
  });

  it("answers 404 for an unknown currency and for another app's currency", async () => {
    const p = await registerPlayer(stack);
    expectError(await credit(p, randomUUID(), { amount: '1' }), 404, 'currency_not_found');
    const other = await stack.bus.request(AdminCreateApp, { name: 'Other Game' }, { requestId: randomUUID() });
    const otherIds = await currencyIds(other.publishableKey);
    expectError(await credit(p, otherIds.coins!, { amount: '1' }), 404, 'currency_not_found');
    expectError(await credit(p, otherIds.coins!, { amount: '1' }, { alias: true }), 404, 'currency_not_found');
    // And a token of this app is refused with the other app's key.
    expectError(await credit(p, otherIds.coins!, { amount: '1' }, { apiKey: other.publishableKey }), 401, 'invalid_token');
  });

  it('answers 422 pointing at /amount for every amount the pattern, zero or the maximum refuses', async () => {
    const p = await freshPlayer();
    const refused: [unknown, string][] = [
      [{ amount: '1.234' }, 'invalid_field'],
      [{ amount: '-1' }, 'invalid_field'],
      [{ amount: '+1' }, 'invalid_field'],
      [{ amount: '1.' }, 'invalid_field'],
      [{ amount: '.5' }, 'invalid_field'],
      [{ amount: '1e3' }, 'invalid_field'],
      [{ amount: ' 1' }, 'invalid_field'],
      [{ amount: '1,00' }, 'invalid_field'],
      [{ amount: 'ten' }, 'invalid_field'],
      [{ amount: '' }, 'invalid_field'],
      [{ amount: 10 }, 'invalid_field'],
      [{ amount: null }, 'invalid_field'],
      [{}, 'invalid_field'],
      [{ amount: '1'.repeat(41) }, 'invalid_field'],
      [{ amount: '0' }, 'amount_not_positive'],
      [{ amount: '0.00' }, 'amount_not_positive'],
      [{ amount: '1000000.01' }, 'amount_above_maximum'],
      [{ amount: '99999999999999999999' }, 'amount_above_maximum'],
    ];
    for (const [payload, code] of refused) {
      const errors = expectError(await credit(p, coins, payload), 422, code);
      expect(errors[0]!.source, JSON.stringify(payload)).toEqual({ pointer: '/amount' });
    }
    expectError(await credit(p, vaultKey, { amount: '10.01' }, { alias: true }), 422, 'amount_above_maximum');
    // A key is counted in whole units (the demo's vault_key is `whole`): half a key is refused, nothing credited.
    const half = expectError(await credit(p, vaultKey, { amount: '0.5' }), 422, 'amount_not_whole');
    expect(half[0]!.source).toEqual({ pointer: '/amount' });
    expect(balanceOf(await credit(p, vaultKey, { amount: '1.00' }))).toBe('1.00');
    const after = await ledgerTotals(walletPool(stack), demoAppId, p.id, coins);
    expect(after).toMatchObject({ rows: 2, balance: p.coins });
  });

  it('adds exactly 1.00 for 100 concurrent credits of 0.01, with 100 ledger rows', async () => {
    const p = await freshPlayer();
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => credit(p, coins, { amount: '0.01' }, { alias: i % 2 === 0 })));
    const balances = results.map(balanceOf);
    expect(new Set(balances).size).toBe(100);
    const totals = await ledgerTotals(walletPool(stack), demoAppId, p.id, coins);
    expect(totals).toEqual({ rows: 102, balance: '1501.00', sum: '1501.00' });
  });

  it('replays the first answer for the same Idempotency-Key and body, and changes nothing', async () => {
    const p = await freshPlayer();
    const key = `credit-${randomUUID()}`;
    const first = await credit(p, coins, { amount: '25.50' }, { key });
    expect(balanceOf(first)).toBe('1525.50');
    await credit(p, coins, { amount: '1' });
    const again = await credit(p, coins, { amount: '25.50' }, { key, alias: true });
    expect(again.statusCode).toBe(first.statusCode);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const totals = await ledgerTotals(walletPool(stack), demoAppId, p.id, coins);
    expect(totals).toMatchObject({ rows: 4, balance: '1526.50' });
    // The key belongs to this player: another player may use the same key for their own credit.
    const q = await freshPlayer();
    expect(balanceOf(await credit(q, coins, { amount: '25.50' }, { key }))).toBe('1525.50');
  });

  it('answers 409 for the same Idempotency-Key with another body, and applies nothing', async () => {
    const p = await freshPlayer();
    const key = randomUUID();
    balanceOf(await credit(p, coins, { amount: '5' }, { key }));
    expectError(await credit(p, coins, { amount: '6' }, { key }), 409, 'idempotency_key_reused');
    expectError(await credit(p, coins, { amount: '5.00' }, { key }), 409, 'idempotency_key_reused');
    expectError(await credit(p, gems, { amount: '5' }, { key }), 409, 'idempotency_key_reused');
    expect(await ledgerTotals(walletPool(stack), demoAppId, p.id, coins)).toMatchObject({ rows: 3, balance: '1505.00' });
  });

  it('applies 20 concurrent requests with one Idempotency-Key once, all answering the same', async () => {
    const p = await freshPlayer();
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 20 }, () => credit(p, coins, { amount: '7.77' }, { key })));
    for (const r of results) expect(balanceOf(r)).toBe('1507.77');
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    expect(await ledgerTotals(walletPool(stack), demoAppId, p.id, coins)).toMatchObject({ rows: 3, balance: '1507.77' });
  });

  it('forgets an Idempotency-Key after its retention window', async () => {
    const p = await freshPlayer();
    const key = randomUUID();
    balanceOf(await credit(p, coins, { amount: '1' }, { key }));
    const pool = walletPool(stack);
    await pool.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE player_id = $1 AND key = $2", [p.id, key]);
    expect(await deleteKeysOlderThan(pool, 24)).toBeGreaterThanOrEqual(1);
    expect(balanceOf(await credit(p, coins, { amount: '2' }, { key }))).toBe('1503.00');
  });

  it('lets a failed request be corrected and retried with the same Idempotency-Key', async () => {
    const p = await freshPlayer();
    const key = randomUUID();
    expectError(await credit(p, coins, { amount: '0' }, { key }), 422, 'amount_not_positive');
    expect(balanceOf(await credit(p, coins, { amount: '3' }, { key }))).toBe('1503.00');
  });

  it('answers 409 rather than failing when a balance would pass the largest amount the wallet holds', async () => {
    const p = await freshPlayer();
    await walletPool(stack).query('UPDATE balances SET amount = 999999999999999999.00 WHERE app_id = $1 AND player_id = $2 AND currency_id = $3', [
      demoAppId,
      p.id,
      coins,
    ]);
    expectError(await credit(p, coins, { amount: '1' }), 409, 'balance_limit_exceeded');
  });

  it('answers 403 paid_currency for a paid currency on both paths, with any key, and changes nothing', async () => {
    const p = await freshPlayer();
    const before = await ledgerTotals(walletPool(stack), demoAppId, p.id, gems);
    expect(before).toMatchObject({ rows: 2, balance: '15.00' });
    const other = await stack.bus.request(AdminCreateApp, { name: 'Secret-key game' }, { requestId: randomUUID() });
    const q = await registerPlayer(stack, other.publishableKey);
    const otherGems = (await currencyIds(other.publishableKey, q.token)).gems!;
    for (const alias of [false, true]) {
      for (const amount of ['100000', '1', '0', '0.01']) {
        const errors = expectError(await credit(p, gems, { amount }, { alias }), 403, 'paid_currency');
        expect(errors[0]!.detail).toMatch(/paid currency/);
      }
      expectError(await credit(p, gems, { amount: '1' }, { alias, key: randomUUID() }), 403, 'paid_currency');
      // The studio's secret key does not open the player endpoint to paid currencies either.
      expectError(await credit(q, otherGems, { amount: '1' }, { alias, apiKey: other.secretKey }), 403, 'paid_currency');
    }
    expect(await ledgerTotals(walletPool(stack), demoAppId, p.id, gems)).toEqual(before);
    const refused = await walletPool(stack).query('SELECT 1 FROM idempotency_keys WHERE player_id = $1', [p.id]);
    expect(refused.rowCount).toBe(0);
  });

  it('answers 403 player_credit_disabled where the content does not let players credit (the default), and accepts the secret key', async () => {
    const { player_credit_allowed: _allowed, ...players } = readContentFile().players;
    const content = { ...readContentFile(), players };
    const app = await stack.bus.request(AdminCreateApp, { name: 'Server-credit game', content: content as never }, { requestId: randomUUID() });
    const p = await registerPlayer(stack, app.publishableKey);
    const ids = await currencyIds(app.publishableKey, p.token);
    const appId = JSON.parse(Buffer.from(p.token.split('.')[1]!, 'base64url').toString()).app as string;
    const before = await eventually(async () => {
      const t = await ledgerTotals(walletPool(stack), appId, p.id, ids.coins!);
      expect(t.rows).toBe(2);
      return t;
    });
    for (const alias of [false, true]) {
      const errors = expectError(await credit(p, ids.coins!, { amount: '1' }, { apiKey: app.publishableKey, alias }), 403, 'player_credit_disabled');
      expect(errors[0]!.detail).toContain('/api/v1/admin/players/{player_id}/credits');
    }
    expect(await ledgerTotals(walletPool(stack), appId, p.id, ids.coins!)).toEqual(before);
    // The studio's secret key (its server, with the player's token) may still credit a free currency.
    expect(balanceOf(await credit(p, ids.coins!, { amount: '1' }, { apiKey: app.secretKey }))).toBe('1501.00');
  });
});
