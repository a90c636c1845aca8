import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appleGems, googleGems, startStoreStack, type StoreStack, ADULT_BIRTH_YEAR } from '../../../test/support/store/store-stack.js';
import { ApiError, createChestClient, newIdempotencyKey, type ChestClient } from '../src/index.js';

/**
 * The typed client's verifyPurchase against the running gateway and store service (a stack whose
 * store trusts a test certificate authority and calls a stand-in of Google Play): an App Store
 * transaction and a Google Play purchase verified and granted once (a second call answers the
 * first grant, replayed), and the refusals as ApiError with the API's codes.
 */
describe('the typed client, store purchases', () => {
  let s: StoreStack;
  let baseUrl: string;
  const failure = (p: Promise<unknown>) => p.then(() => expect.unreachable('the call should fail')).catch((e: unknown) => e as ApiError);

  /** A client signed in as a new player, and that player's id. */
  async function player(): Promise<{ c: ChestClient; id: string }> {
    const c = createChestClient({ baseUrl, apiKey: s.stack.apiKey, retry: false });
    const registered = await c.register(`store-${newIdempotencyKey().slice(0, 8)}@example.com`, 'Str0ng!pass');
    // An adult: the demo content's CN rule pack refuses store payments to a player of unknown age.
    await c.updateMe({ birth_year: ADULT_BIRTH_YEAR });
    return { c, id: registered.data.id };
  }

  /** The player's gems (GET /api/v1/currencies). */
  const gemsOf = async (c: ChestClient) => Number((await c.currencies()).data.find((x) => x.attributes.code === 'gems')?.attributes.balance?.amount);

  beforeAll(async () => {
    s = await startStoreStack();
    baseUrl = await s.stack.app.listen({ port: 0, host: '127.0.0.1' });
  }, 60_000);
  afterAll(async () => s?.close());

  it('verifies an App Store transaction: the purchase, its grants and the balance; the same again is replayed', async () => {
    const { c, id } = await player();
    const before = await gemsOf(c);
    const signedTransaction = await appleGems(s, id);
    const first = await c.verifyPurchase({ platform: 'apple', signedTransaction });
    expect(first.data.attributes).toMatchObject({
      platform: 'apple',
      product_id: 'gems-500',
      state: 'granted',
      price: { amount: '4.99', currency: 'USD' },
    });
    expect(first.meta.grants.currencies).toEqual([{ currency: 'gems', amount: '500' }]);
    expect(Number(first.meta.balances!.gems)).toBe(before + 500);
    expect(first.meta.replayed).toBe(false);
    const again = await c.verifyPurchase({ platform: 'apple', signedTransaction });
    expect([again.data.id, again.meta.replayed]).toEqual([first.data.id, true]);
    expect(await gemsOf(c)).toBe(before + 500);
  });

  it('verifies a Google Play purchase by product id and purchase token', async () => {
    const { c, id } = await player();
    const bought = googleGems(s, id, { productId: 'starter_pack', price: '9.99', currency: 'EUR' });
    const r = await c.verifyPurchase({ platform: 'google', productId: 'starter_pack', purchaseToken: bought.token });
    expect(r.data.attributes).toMatchObject({
      platform: 'google',
      product_id: 'starter-pack',
      transaction_id: bought.orderId,
      price: { amount: '9.99', currency: 'EUR' },
    });
    expect(r.meta.grants.chests).toHaveLength(2);
    const inventory = (await c.inventory()).data.map((chest) => chest.id);
    for (const chest of r.meta.grants.chests) expect(inventory).toContain(chest.id);
  });

  it("throws the API's refusals as ApiError with their codes, granting nothing", async () => {
    const { c, id } = await player();
    const other = await player();
    const wrongApp = await failure(
      c.verifyPurchase({ platform: 'apple', signedTransaction: await appleGems(s, id, { bundleId: 'com.other.game' }) }),
    );
    expect(wrongApp).toBeInstanceOf(ApiError);
    expect([wrongApp.status, wrongApp.code]).toEqual([422, 'receipt_wrong_app']);
    const forged = await failure(c.verifyPurchase({ platform: 'apple', signedTransaction: 'not.a.jws' }));
    expect([forged.status, forged.code]).toEqual([422, 'receipt_invalid']);
    // A transaction another player claimed first.
    const shared = await appleGems(s, id, { appAccountToken: undefined });
    await other.c.verifyPurchase({ platform: 'apple', signedTransaction: shared });
    const claimed = await failure(c.verifyPurchase({ platform: 'apple', signedTransaction: shared }));
    expect([claimed.status, claimed.code]).toEqual([409, 'transaction_claimed']);
    const pending = googleGems(s, id, { state: 'pending' });
    const notYet = await failure(c.verifyPurchase({ platform: 'google', productId: 'gems_500', purchaseToken: pending.token }));
    expect([notYet.status, notYet.code]).toEqual([409, 'purchase_pending']);
    // Nothing granted: the 10 + 5 gems a new player starts with.
    expect(await gemsOf(c)).toBe(15);
  });
});
