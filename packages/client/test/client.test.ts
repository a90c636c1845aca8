import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readContentFile } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../../../test/support/stack.js';
import { ApiError, createChestClient, newIdempotencyKey, type ChestClient, type Tokens } from '../src/index.js';

/** The end-to-end tier through the typed client, over real HTTP to the gateway. */
const content = readContentFile();

describe('the typed client, against the running gateway', () => {
  let stack: TestStack;
  let baseUrl: string;
  /** Every request path the client sent, to count refreshes. */
  const sent: string[] = [];
  const counting: typeof fetch = (input, init) => {
    sent.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
    return fetch(input, init);
  };
  const client = (tokens?: Tokens, onTokens?: (t: Tokens | undefined) => void): ChestClient =>
    createChestClient({ baseUrl, apiKey: stack.apiKey, tokens, onTokens, fetch: counting });
  const email = () => `client-${newIdempotencyKey().slice(0, 8)}@example.com`;

  beforeAll(async () => {
    stack = await startStack();
    baseUrl = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => stack?.close());

  it('registers, buys, opens (a retry with the same key gives the same opening) and reads the collection', async () => {
    const c = client();
    const registered = await c.register(email(), 'Str0ng!pass');
    expect(c.session?.accessToken).toBe(registered.meta.access_token);
    const wooden = (await c.catalog()).data.find((ch) => ch.attributes.name === 'Wooden Chest')!;
    const bought = await c.purchase(wooden.id, 'coins', 1);
    const chestId = bought.data[0]!.id;
    const key = newIdempotencyKey();
    const opened = await c.open(chestId, { idempotencyKey: key });
    const items = content.chests.find((ch) => ch.id === 'wooden-chest')!.rules.items;
    expect(opened.data.collectibles).toHaveLength('fixed' in items ? items.fixed : opened.data.collectibles.length);
    expect((await c.open(chestId, { idempotencyKey: key })).meta.opening_id).toBe(opened.meta.opening_id);
    await eventually(async () => expect((await c.collection()).data.length).toBeGreaterThan(0));
    expect((await c.inventory()).data.map((ch) => ch.id)).not.toContain(chestId);
  });

  it('credits once per Idempotency-Key', async () => {
    const c = client();
    await c.register(email(), 'Str0ng!pass');
    const coins = (await c.currencies()).data.find((cur) => cur.attributes.code === 'coins')!;
    const before = Number(coins.attributes.balance!.amount);
    const key = newIdempotencyKey();
    await c.credit(coins.id, '10.00', { idempotencyKey: key });
    const again = await c.credit(coins.id, '10.00', { idempotencyKey: key });
    expect(Number(again.data.balance.amount)).toBe(before + 10);
  });

  it('throws an ApiError with the JSON:API errors', async () => {
    const c = client();
    await c.register(email(), 'Str0ng!pass');
    const golden = (await c.catalog()).data.find((ch) => ch.attributes.name === 'Golden Chest')!;
    const err = await c.purchase(golden.id, 'coins').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect([(err as ApiError).status, (err as ApiError).code]).toEqual([422, 'price_unavailable']);
  });

  it('refreshes an invalid access token once, for concurrent calls too, and retries each call once', async () => {
    const first = client();
    await first.register(email(), 'Str0ng!pass');
    const heard: (Tokens | undefined)[] = [];
    const stale = client({ accessToken: `${first.session!.accessToken}x`, refreshToken: first.session!.refreshToken }, (t) => heard.push(t));
    sent.length = 0;
    const [me, inventory] = await Promise.all([stale.me(), stale.inventory()]);
    expect(me.data.id).toBeDefined();
    expect(inventory.data.length).toBeGreaterThanOrEqual(0);
    expect(sent.filter((p) => p === '/api/v1/players/refresh')).toHaveLength(1);
    expect(heard).toHaveLength(1);
    expect(stale.session!.accessToken).not.toBe(first.session!.accessToken);

    // A refused refresh signs out: the call fails with its 401, nothing loops.
    const revoked = client({ accessToken: 'x.y.z', refreshToken: 'rt_not-a-real-token' });
    const err = await revoked.me().catch((e: unknown) => e);
    expect([(err as ApiError).status, revoked.session]).toEqual([401, undefined]);
  });
});
