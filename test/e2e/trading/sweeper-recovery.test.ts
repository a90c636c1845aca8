import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, DebitCurrency } from '@ccs/shared';
import { appOfToken, grantCurrency } from '../../support/grant-currency.js';
import { eventually, startStack, type TestStack } from '../../support/stack.js';
import { collectionsDb } from '../collections/support.js';
import { balance, copies, give, post, trader, tradingApp, tradingContent, type Trader, type TradingApp } from './support.js';

/**
 * The trades sweeper's crash recovery, through the running stack (docs/architecture.md, "The trade
 * saga"): a trade left `offering` or `accepting` by a process that died mid-saga (written as the
 * crash leaves it: escrow taken and tokens debited, the next step never run) is given up by the
 * sweeper; escrow, stamina and tokens come back exactly once, and a refund owed while the wallet
 * is down is retried until the wallet is back and settles it.
 */
describe('trades sweeper crash recovery', () => {
  let stack: TestStack;
  let app: TradingApp;
  const raw: string[] = [];
  const lines = () => raw.map((l) => JSON.parse(l) as { name: string; msg: string; reference?: string });

  beforeAll(async () => {
    const sink = { write: (s: string) => void raw.push(s) };
    // A sweeper pass every 200 ms; owed refunds retried after 500 ms; a step left 5 s is given up.
    stack = await startStack({
      env: { TRADE_SWEEP_INTERVAL_MS: '200', TRADE_STUCK_MS: '5000' },
      logger: (name) => createLogger(name, 'warn', sink),
    });
    app = await tradingApp(
      stack,
      tradingContent((t) => {
        t.friends_only = false;
      }),
    );
  });
  // A test that stopped the wallet and failed before starting it again leaves it running for the next.
  afterEach(async () => {
    if (stack && !stack.services.wallet) await stack.startService('wallet');
  });
  afterAll(async () => {
    await stack?.close();
  });

  const sql = async <T extends object>(text: string, params: unknown[]): Promise<T[]> => {
    const db = await collectionsDb(stack);
    try {
      return (await db.query(text, params)).rows as T[];
    } finally {
      await db.end();
    }
  };
  const tokens = (p: Trader, n: number) => grantCurrency(stack, appOfToken(p.token), p.id, 'trade_tokens', String(n));
  const offer = (p: Trader, partner: string, giveId: string, want: string) =>
    post(stack, p, '/api/v1/trades', {
      data: { type: 'trade', attributes: { give: giveId, want }, relationships: { partner: { data: { type: 'player', id: partner } } } },
    });
  const staminaOf = async (p: Trader) =>
    (await sql<{ stamina: number }>('SELECT stamina FROM trade_players WHERE player_id = $1', [p.id]))[0]?.stamina;
  const stateOf = async (id: string) => (await sql<{ state: string }>('SELECT state FROM trades WHERE id = $1', [id]))[0]?.state;
  const refunds = (id: string) =>
    sql<{ reference: string; done: boolean }>('SELECT reference, done_at IS NOT NULL AS done FROM trade_refunds WHERE trade_id = $1', [id]);
  const logged = (id: string, action: string) =>
    sql<{ n: number }>('SELECT count(*)::int AS n FROM trade_log WHERE trade_id = $1 AND action = $2', [id, action]).then((r) => r[0]!.n);

  it('fails an offer left offering after its debit, returns copy, stamina and tokens once, and retries the refund until the wallet is back', async () => {
    const [a, b] = await Promise.all([trader(stack, app), trader(stack, app)]);
    await Promise.all([give(stack, app, a, ['ancient-sun-disk']), tokens(a, 5)]);
    const res = await offer(a, b.id, 'ancient-sun-disk', 'ancient-golden-mask');
    expect(res.statusCode, res.body).toBe(201);
    const id: string = res.json().data.id;
    expect(await balance(stack, a)).toBe(0);
    expect(await copies(stack, a)).toEqual({});
    expect(await staminaOf(a)).toBe(2);

    // The wallet goes away, and the offer is left as a crash after its debit leaves it: `offering`, long ago.
    await stack.stopService('wallet');
    await sql("UPDATE trades SET state = 'offering', state_at = now() - interval '1 hour' WHERE id = $1", [id]);

    // The sweeper gives it up: failed, the copy and stamina back, the offer's tokens owed back.
    await eventually(async () => expect(await stateOf(id)).toBe('failed'));
    expect(await copies(stack, a)).toEqual({ 'ancient-sun-disk': 1 });
    expect(await staminaOf(a)).toBe(3);
    // The wallet cannot be reached: the refund stays owed, and the sweeper tries it again.
    const reference = `trade:${id}:offer`;
    await eventually(async () => {
      const tries = lines().filter((l) => l.name === 'collections' && l.reference === reference && /refund not settled/.test(l.msg));
      expect(tries.length).toBeGreaterThanOrEqual(2);
    });
    expect(await refunds(id)).toEqual([{ reference, done: false }]);

    // The wallet is back: the next pass settles it, and the tokens are back once.
    await stack.startService('wallet');
    await eventually(async () => expect(await refunds(id)).toEqual([{ reference, done: true }]));
    expect(await balance(stack, a)).toBe(5);
    expect(await logged(id, 'offer_failed')).toBe(1);
    expect(await copies(stack, a)).toEqual({ 'ancient-sun-disk': 1 });
    expect(await staminaOf(a)).toBe(3);
    // The failed offer frees the pair for a new one, which is charged as any offer is.
    const again = await offer(a, b.id, 'ancient-sun-disk', 'ancient-golden-mask');
    expect(again.statusCode, again.body).toBe(201);
    expect(await balance(stack, a)).toBe(0);
  });

  it('takes back an accept left accepting after its debit: the partner gets copy and tokens back once, and the trade can still complete', async () => {
    const [a, b] = await Promise.all([trader(stack, app), trader(stack, app)]);
    await Promise.all([give(stack, app, a, ['ancient-sun-disk']), give(stack, app, b, ['ancient-golden-mask']), tokens(a, 5), tokens(b, 5)]);
    const res = await offer(a, b.id, 'ancient-sun-disk', 'ancient-golden-mask');
    expect(res.statusCode, res.body).toBe(201);
    const id: string = res.json().data.id;

    // A crash after the accept's escrow and debit: b's copy out of the collection, b's tokens
    // debited under the accept's reference, the trade `accepting` (attempt 1) long ago.
    const reference = `trade:${id}:accept:1`;
    await stack.bus.request(
      DebitCurrency,
      { playerId: b.id, currency: 'trade_tokens', amount: '5', reference },
      { requestId: randomUUID(), appId: app.appId },
    );
    await sql(
      `WITH taken AS (
         UPDATE player_collectibles SET copies = copies - 1 WHERE player_id = $2 AND collectible_id = 'ancient-golden-mask' AND copies > 1
       ), gone AS (
         DELETE FROM player_collectibles WHERE player_id = $2 AND collectible_id = 'ancient-golden-mask' AND copies = 1
       )
       UPDATE trades SET state = 'accepting', accept_attempt = 1, state_at = now() - interval '1 hour' WHERE id = $1`,
      [id, b.id],
    );
    expect(await balance(stack, b)).toBe(0);
    expect(await copies(stack, b)).toEqual({});

    // The sweeper takes the accept back: b's copy back, the trade open again, b's tokens refunded once.
    await eventually(async () => expect(await stateOf(id)).toBe('offered'));
    await eventually(async () => expect(await refunds(id)).toEqual([{ reference, done: true }]));
    expect(await balance(stack, b)).toBe(5);
    expect(await copies(stack, b)).toEqual({ 'ancient-golden-mask': 1 });
    expect(await logged(id, 'accept_reverted')).toBe(1);
    // The offerer's side was never touched: still in escrow, stamina still spent.
    expect(await copies(stack, a)).toEqual({});
    expect(await balance(stack, a)).toBe(0);
    expect(await staminaOf(a)).toBe(2);

    // A new accept is its own attempt (its own reference) and completes the trade.
    const accepted = await post(stack, b, `/api/v1/trades/${id}/accept`);
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().data.attributes.state).toBe('completed');
    expect(await copies(stack, a)).toEqual({ 'ancient-golden-mask': 1 });
    expect(await copies(stack, b)).toEqual({ 'ancient-sun-disk': 1 });
    expect([await balance(stack, a), await balance(stack, b)]).toEqual([0, 0]);
    expect(await refunds(id)).toEqual([{ reference, done: true }]);
  });
});
