import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type TestStack } from '../../support/stack.js';
import { collectionsDb } from '../collections/support.js';
import { balance, copies, dissolve, give, newKey, trader, tradingApp, tradingContent, type TradingApp } from './support.js';

/**
 * Dissolving copies into trade tokens (docs/content.md, "Trading") through the running stack:
 * the copies leave, the rarity's tokens per copy arrive once, at least dissolve_keeps stay, and
 * every refusal changes nothing.
 */
describe('dissolve', () => {
  let stack: TestStack;
  let app: TradingApp;
  let closed: TradingApp;

  beforeAll(async () => {
    stack = await startStack();
    [app, closed] = await Promise.all([
      tradingApp(stack),
      tradingApp(
        stack,
        tradingContent((t) => void (t.enabled = false)),
      ),
    ]);
  });
  afterAll(async () => stack?.close());

  it("takes the copies and credits the rarity's tokens per copy, once per Idempotency-Key", async () => {
    const p = await trader(stack, app);
    await give(stack, app, p, [
      'ancient-clay-amulet',
      'ancient-clay-amulet',
      'ancient-clay-amulet',
      'ancient-clay-amulet',
      'ancient-sun-disk',
      'ancient-sun-disk',
    ]);
    const key = newKey();
    const res = await dissolve(stack, p, 'ancient-clay-amulet', 3, key);
    expect(res.statusCode, res.body).toBe(201);
    const doc = res.json();
    expect(doc.data).toMatchObject({
      type: 'dissolve',
      attributes: { collectible_id: 'ancient-clay-amulet', quantity: 3, tokens: { currency: 'trade_tokens', amount: 6 }, copies_left: 1 },
      meta: { credited: true },
    });
    // The wallet applied it before the answer: read-your-writes.
    expect(await balance(stack, p)).toBe(6);
    const again = await dissolve(stack, p, 'ancient-clay-amulet', 3, key);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().data.id).toBe(doc.data.id);
    expect(await dissolve(stack, p, 'ancient-sun-disk', 1, key).then((r) => [r.statusCode, r.json().errors[0].code])).toEqual([
      409,
      'idempotency_key_reused',
    ]);
    const rare = await dissolve(stack, p, 'ancient-sun-disk', 1);
    expect(rare.json().data.attributes.tokens).toEqual({ currency: 'trade_tokens', amount: 10 });
    expect(await balance(stack, p)).toBe(16);
    expect(await copies(stack, p)).toEqual({ 'ancient-clay-amulet': 1, 'ancient-sun-disk': 1 });
    const db = await collectionsDb(stack);
    try {
      const { rows } = await db.query('SELECT count(*)::int AS n FROM dissolves WHERE player_id = $1', [p.id]);
      expect(rows[0].n).toBe(2);
    } finally {
      await db.end();
    }
  });

  it('keeps dissolve_keeps copies (409 would_dissolve_kept_copies, saying how many can go)', async () => {
    const p = await trader(stack, app);
    await give(stack, app, p, ['ancient-bronze-coin', 'ancient-bronze-coin', 'ancient-bronze-coin']);
    const res = await dissolve(stack, p, 'ancient-bronze-coin', 3);
    expect(res.statusCode).toBe(409);
    expect(res.json().errors[0]).toMatchObject({ code: 'would_dissolve_kept_copies', meta: { copies: 3, dissolve_keeps: 1, max_quantity: 2 } });
    expect((await dissolve(stack, p, 'ancient-bronze-coin', 2)).statusCode).toBe(201);
    expect((await dissolve(stack, p, 'ancient-bronze-coin', 1)).json().errors[0].code).toBe('would_dissolve_kept_copies');
    expect(await copies(stack, p)).toEqual({ 'ancient-bronze-coin': 1 });
    expect(await balance(stack, p)).toBe(4);
  });

  it('refuses hostile input with its code and changes nothing', async () => {
    const p = await trader(stack, app);
    await give(stack, app, p, ['ancient-carved-totem', 'ancient-carved-totem', 'ancient-pharaohs-crook', 'ancient-pharaohs-crook']);
    const refusals: [string, unknown, number, string | undefined][] = [
      ['ancient-carved-totem', 0, 422, undefined],
      ['ancient-carved-totem', -1, 422, undefined],
      ['ancient-carved-totem', 1e9, 422, undefined],
      ['ancient-carved-totem', 1.5, 422, undefined],
      ['ancient-carved-totem', '1', 422, undefined],
      ['ANCIENT-CARVED-TOTEM', 1, 404, 'collectible_not_found'],
      ['no-such-thing', 1, 404, 'collectible_not_found'],
      ['x'.repeat(300), 1, 404, 'collectible_not_found'],
      ['ancient-jade-scarab', 1, 409, 'not_owned'],
      ['ancient-pharaohs-crook', 1, 422, 'not_dissolvable'],
    ];
    for (const [id, quantity, status, code] of refusals) {
      const res = await dissolve(stack, p, id, quantity);
      expect(res.statusCode, `${id} ${String(quantity)}: ${res.body}`).toBe(status);
      if (code) expect(res.json().errors[0].code).toBe(code);
    }
    const off = await trader(stack, closed);
    await give(stack, closed, off, ['ancient-carved-totem', 'ancient-carved-totem']);
    const disabled = await dissolve(stack, off, 'ancient-carved-totem', 1);
    expect([disabled.statusCode, disabled.json().errors[0].code]).toEqual([403, 'trading_disabled']);
    expect(await copies(stack, p)).toEqual({ 'ancient-carved-totem': 2, 'ancient-pharaohs-crook': 2 });
    expect(await copies(stack, off)).toEqual({ 'ancient-carved-totem': 2 });
    expect(await balance(stack, p)).toBe(0);
    expect(await balance(stack, off)).toBe(0);
  });

  it('applies concurrent dissolves of one holding one after another: never below dissolve_keeps', async () => {
    const p = await trader(stack, app);
    await give(
      stack,
      app,
      p,
      Array.from({ length: 6 }, () => 'ancient-stone-tablet'),
    );
    const answers = await Promise.all(Array.from({ length: 10 }, () => dissolve(stack, p, 'ancient-stone-tablet', 1)));
    const statuses = answers.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(answers.filter((r) => r.statusCode === 409).map((r) => r.json().errors[0].code)).toEqual(Array(5).fill('would_dissolve_kept_copies'));
    expect(await copies(stack, p)).toEqual({ 'ancient-stone-tablet': 1 });
    expect(await balance(stack, p)).toBe(10);
  });
});
