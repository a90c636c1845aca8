import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type TestStack } from '../../../test/support/stack.js';
import { studioGrant } from '../../../services/chests/test/support/chests.js';
import { ApiError, createChestClient, newIdempotencyKey, type ChestClient } from '../src/index.js';

/**
 * The typed client's banner methods against the running gateway (docs/design.md §8): the demo banner
 * kraken-rising (the Abyssal Chest at 1,000 coins a pull, a spark at 10 points on sea-kraken) read,
 * its odds, a keyed ten-pull and its retry, a keyed spark and its retry, and the refusals as ApiError.
 */
describe('the typed client, banners', () => {
  let stack: TestStack;
  let baseUrl: string;
  const client = (): ChestClient => createChestClient({ baseUrl, apiKey: stack.apiKey, retry: { attempts: 1, maxDelayMs: 1000 } });
  const failure = (p: Promise<unknown>) => p.then(() => expect.unreachable('the call should fail')).catch((e: unknown) => e as ApiError);

  beforeAll(async () => {
    stack = await startStack();
    baseUrl = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => stack?.close());

  it('lists and reads a banner and its odds, without a session and with the player’s standing', async () => {
    const anonymous = await client().listBanners();
    const kraken = anonymous.data.find((b) => b.id === 'kraken-rising');
    expect(kraken, JSON.stringify(anonymous.data.map((b) => b.id))).toBeDefined();
    expect(kraken!.meta.player).toBeUndefined();

    const c = client();
    await c.register(`banners-${newIdempotencyKey().slice(0, 8)}@example.com`, 'Str0ng!pass');
    expect((await c.listBanners()).data.find((b) => b.id === 'kraken-rising')!.meta.player).toMatchObject({ pulls: 0, spark_points: 0 });
    const banner = await c.getBanner('kraken-rising');
    expect(banner.data.relationships.chest_type.data.id).toBe(kraken!.relationships.chest_type.data.id);
    // What a pull costs, and the featured collectible by its name as well as its id (typed by the generated schema).
    expect(banner.data.attributes.price_per_pull).toEqual({ coins: 1000, gems: 25 });
    expect(banner.data.attributes.featured).toMatchObject({ collectibles: ['sea-kraken'], names: ['Kraken'] });
    const odds = await c.getBannerOdds('kraken-rising');
    expect(odds.data.attributes).toMatchObject({
      chest_type_id: kraken!.relationships.chest_type.data.id,
      featured: { collectibles: ['sea-kraken'] },
    });
    expect(odds.meta.player).toMatchObject({ pulls: 0, spark_points: 0 });
    const err = await failure(c.getBanner('no-such-banner'));
    expect(err).toBeInstanceOf(ApiError);
    expect([err.status, err.code]).toEqual([404, 'banner_not_found']);
  });

  it('pulls ten and exchanges the spark, each once under its Idempotency-Key', async () => {
    const c = client();
    const registered = await c.register(`banners-${newIdempotencyKey().slice(0, 8)}@example.com`, 'Str0ng!pass');
    const player = { id: registered.data.id, token: c.session!.accessToken, apiKey: stack.apiKey, starterChestId: '' };

    // Before the coins: refused as a purchase is, saying what a ten-pull costs.
    const poor = await failure(c.pullBanner('kraken-rising', { count: 10, currency: 'coins' }));
    expect([poor.status, poor.code]).toEqual([409, 'insufficient_funds']);
    expect(poor.errors[0]!.meta).toMatchObject({ currency: 'coins', required: '10000.00' });

    // A ten-pull's 10,000 coins (the welcome credits, landed or not, cannot pay for a second one).
    await studioGrant(stack, player, 'coins', '10000');
    const key = newIdempotencyKey();
    const pulled = await c.pullBanner('kraken-rising', { count: 10, currency: 'coins' }, { idempotencyKey: key });
    expect(pulled.data).toHaveLength(10);
    expect(pulled.data.map((o) => o.meta.banner!.spark_points_after)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(pulled.meta).toMatchObject({ banner_id: 'kraken-rising', pulls: 10 });
    const again = await c.pullBanner('kraken-rising', { count: 10, currency: 'coins' }, { idempotencyKey: key });
    expect(again.meta.purchase_id).toBe(pulled.meta.purchase_id);
    expect(again.data.map((o) => o.meta.opening_id)).toEqual(pulled.data.map((o) => o.meta.opening_id));
    // Paid once: the 10,000 coins bought one ten-pull, and a second one is refused.
    const broke = await failure(c.pullBanner('kraken-rising', { count: 10, currency: 'coins' }));
    expect([broke.status, broke.code]).toEqual([409, 'insufficient_funds']);
    expect((await c.getBanner('kraken-rising')).data.meta.player).toMatchObject({ pulls: 10, spark_points: 10 });

    const sparkKey = newIdempotencyKey();
    const exchange = await c.sparkBanner('kraken-rising', 'sea-kraken', { idempotencyKey: sparkKey });
    expect(exchange.data.attributes).toMatchObject({ banner_id: 'kraken-rising', collectible_id: 'sea-kraken', cost: 10 });
    expect(exchange.meta.spark_points_after).toBe(0);
    expect((await c.sparkBanner('kraken-rising', 'sea-kraken', { idempotencyKey: sparkKey })).data.id).toBe(exchange.data.id);
    const spent = await failure(c.sparkBanner('kraken-rising', 'sea-kraken'));
    expect([spent.status, spent.code]).toEqual([409, 'spark_points_insufficient']);
  });
});
