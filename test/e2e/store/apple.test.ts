import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJsonApi } from '../../support/jsonapi-schema.js';
import { appleGems, balances, inventoryIds, newPlayer, startStoreStack, submitApple, type StoreStack } from '../../support/store/store-stack.js';

describe('App Store purchases', () => {
  let s: StoreStack;
  beforeAll(async () => {
    s = await startStoreStack();
  });
  afterAll(async () => s?.close());

  it('verifies a signed transaction, grants its product once and answers with the balance (read-your-writes)', async () => {
    const p = await newPlayer(s);
    const before = Number((await balances(s, p.token)).gems);
    const jws = await appleGems(s, p.id);
    const res = await submitApple(s, p.token, jws);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expectJsonApi(body);
    expect(body.data.type).toBe('store_purchase');
    expect(body.data.attributes).toMatchObject({
      platform: 'apple',
      product_id: 'gems-500',
      state: 'granted',
      price: { amount: '4.99', currency: 'USD' },
    });
    expect(body.meta.grants.currencies).toEqual([{ currency: 'gems', amount: '500' }]);
    expect(Number(body.meta.balances.gems)).toBe(before + 500);
    expect(Number((await balances(s, p.token)).gems)).toBe(before + 500);

    const again = await submitApple(s, p.token, jws);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().meta.replayed).toBe(true);
    expect(again.json().data.id).toBe(body.data.id);
    expect(Number((await balances(s, p.token)).gems)).toBe(before + 500);
  });

  it('grants the chests of a pack into the inventory before answering', async () => {
    const p = await newPlayer(s);
    const res = await submitApple(s, p.token, await appleGems(s, p.id, { productId: 'com.example.chests.starter_pack' }));
    expect(res.statusCode, res.body).toBe(201);
    const chests = res.json().meta.grants.chests as { id: string }[];
    expect(chests).toHaveLength(2);
    const ids = await inventoryIds(s, p.token);
    for (const c of chests) expect(ids).toContain(c.id);
  });
});
