import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startStack, type TestStack } from '../../../test/support/stack.js';
import { ApiError, createChestClient, newIdempotencyKey, type ChestClient, type Tokens } from '../src/index.js';
import { give, tradingApp } from '../../../test/e2e/trading/support.js';

/**
 * Every named operation of the typed client against the running gateway: each answers the typed
 * document, and each failure is an ApiError (status, code, detail). Last, a refresh failing while
 * the players service is down keeps the session.
 */
describe('the typed client, every player operation', () => {
  let stack: TestStack;
  let baseUrl: string;
  const client = (tokens?: Tokens, onTokens?: (t: Tokens | undefined) => void, apiKey = stack.apiKey): ChestClient =>
    createChestClient({ baseUrl, apiKey, tokens, onTokens, retry: { attempts: 1, maxDelayMs: 1000 } });
  const email = () => `ops-${newIdempotencyKey().slice(0, 8)}@example.com`;
  const failure = (p: Promise<unknown>) => p.then(() => expect.unreachable('the call should fail')).catch((e: unknown) => e as ApiError);

  beforeAll(async () => {
    stack = await startStack();
    baseUrl = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => stack?.close());

  it('a guest registers in place and updates the profile', async () => {
    const c = client();
    const guest = await c.guest();
    expect(guest.meta.player_type).toBe('anonymous');
    const registered = await c.register(email(), 'Str0ng!pass');
    expect(registered.data.id).toBe(guest.data.id);
    const me = await c.updateMe({ privacy: 'friends', country: 'de', birth_year: 1990 });
    expect([me.data.attributes.privacy, me.data.attributes.country]).toEqual(['friends', 'DE']);
    expect((await c.me()).data.id).toBe(guest.data.id);
  });

  it('reads the catalog, odds and content', async () => {
    const c = client();
    await c.register(email(), 'Str0ng!pass');
    const wooden = (await c.catalog({ filter: { name: 'Wooden Chest' } })).data[0]!;
    expect((await c.chest(wooden.id)).data.attributes.name).toBe('Wooden Chest');
    expect((await c.odds(wooden.id)).data.id).toBe(wooden.id);
    const collection = (await c.collections()).data[0]!;
    expect((await c.collectionById(collection.id)).data.id).toBe(collection.id);
    const collectible = (await c.collectionCollectibles(collection.id)).data[0]!;
    expect((await c.collectible(collectible.id)).data.id).toBe(collectible.id);
    expect((await c.collectibles({ page: { limit: 2 } })).data).toHaveLength(2);
    const err = await failure(c.chest('00000000-0000-4000-8000-000000000000'));
    expect(err).toBeInstanceOf(ApiError);
    expect([err.status, err.code, typeof err.detail]).toEqual([404, 'chest_not_found', 'string']);
  });

  it('opens a batch, lists the openings, rotates the seed and verifies an opening', async () => {
    const c = client();
    await c.register(email(), 'Str0ng!pass');
    await c.setClientSeed('lucky-seed');
    expect((await c.fairness()).data.attributes.client_seed).toBe('lucky-seed');
    const wooden = (await c.catalog({ filter: { name: 'Wooden Chest' } })).data[0]!;
    const bought = await c.purchase(wooden.id, 'coins', 2);
    const key = newIdempotencyKey();
    const batch = await c.openMany(
      bought.data.map((ch) => ch.id),
      { idempotencyKey: key },
    );
    expect(batch.data.map((o) => o.chest_id)).toEqual(bought.data.map((ch) => ch.id));
    expect((await c.openMany([bought.data[0]!.id, bought.data[1]!.id], { idempotencyKey: key })).data[0]!.meta.opening_id).toBe(
      batch.data[0]!.meta.opening_id,
    );
    const openings = await c.openings({ page: { limit: 10 } });
    expect(openings.data.map((o) => o.id)).toEqual(expect.arrayContaining(batch.data.map((o) => o.meta.opening_id)));
    const rotated = await c.rotateSeed();
    expect(rotated.meta.revealed.client_seed).toBe('lucky-seed');
    expect((await c.verifyOpening(batch.data[0]!.meta.opening_id)).data.attributes.matches).toBe(true);
    expect((await c.pity()).data).toBeDefined();
    await eventually(async () => expect((await c.collection()).data.length).toBeGreaterThan(0));
    const err = await failure(c.openMany([bought.data[0]!.id]));
    expect([err.status, err.code]).toEqual([403, 'chest_already_opened']);
  });

  it('starts an unlock timer, is refused a skip it cannot pay, and reads the mailbox', async () => {
    const c = client();
    await c.register(email(), 'Str0ng!pass', { country: 'DE', birthYear: 1990 });
    const hourglass = (await c.catalog({ filter: { name: 'Hourglass Chest' } })).data[0]!;
    const [chest] = (await c.purchase(hourglass.id, 'coins')).data;
    const started = await c.unlock(chest!.id);
    expect(started.data.id).toBe(chest!.id);
    const open = await failure(c.open(chest!.id));
    expect([open.status, open.code]).toEqual([403, 'chest_locked']);
    const skip = await failure(c.skipUnlock(chest!.id, 'gems'));
    expect([skip.status, skip.code]).toEqual([409, 'insufficient_funds']);

    const mailbox = await c.mailbox();
    expect([mailbox.data, mailbox.meta.inventory_status.capacity]).toEqual([[], 100]);
    const claim = await failure(c.claimMailboxItem('00000000-0000-4000-8000-000000000000'));
    expect([claim.status, claim.code]).toEqual([404, 'mailbox_item_not_found']);
  });

  it('adds, lists and removes a friend', async () => {
    const [a, b] = [client(), client()];
    await a.register(email(), 'Str0ng!pass');
    const bId = (await b.register(email(), 'Str0ng!pass')).data.id;
    await a.addFriend(bId);
    expect((await a.friends()).data.map((f) => f.id)).toContain(bId);
    await a.removeFriend(bId);
    expect((await a.friends()).data).toEqual([]);
    expect((await b.inventory({}, 'me')).data.length).toBe(1);
  });

  it('dissolves, offers, lists, reads, accepts, declines and cancels trades', async () => {
    const app = await tradingApp(stack);
    const [a, b] = [client(undefined, undefined, app.apiKey), client(undefined, undefined, app.apiKey)];
    const aId = (await a.register(email(), 'Str0ng!pass')).data.id;
    const bId = (await b.register(email(), 'Str0ng!pass')).data.id;
    const holder = (id: string, token: string) => ({ id, token, apiKey: app.apiKey });
    await give(stack, app, holder(aId, a.session!.accessToken), [
      'ancient-clay-amulet',
      'ancient-clay-amulet',
      'ancient-bronze-coin',
      'ancient-carved-totem',
    ]);
    await give(stack, app, holder(bId, b.session!.accessToken), ['ancient-jade-scarab']);
    await a.addFriend(bId);
    await b.addFriend(aId);
    expect((await a.dissolve('ancient-clay-amulet', 1)).data.attributes.tokens).toEqual({ currency: 'trade_tokens', amount: 2 });
    const offered = await a.offerTrade(bId, 'ancient-clay-amulet', 'ancient-jade-scarab');
    expect(offered.data.attributes.state).toBe('offered');
    expect((await b.trades({ filter: { role: 'incoming' } })).data.map((t) => t.id)).toEqual([offered.data.id]);
    expect((await b.trade(offered.data.id)).data.id).toBe(offered.data.id);
    expect((await b.acceptTrade(offered.data.id)).data.attributes.state).toBe('completed');
    const declined = await a.offerTrade(bId, 'ancient-bronze-coin', 'ancient-clay-amulet');
    expect((await b.declineTrade(declined.data.id)).data.attributes.state).toBe('declined');
    const cancelled = await a.offerTrade(bId, 'ancient-carved-totem', 'ancient-clay-amulet');
    expect((await a.cancelTrade(cancelled.data.id)).data.attributes.state).toBe('cancelled');
    const ended = await failure(a.cancelTrade(cancelled.data.id));
    expect(ended).toBeInstanceOf(ApiError);
    expect([ended.status, ended.code]).toEqual([409, 'trade_ended']);
  });

  it('keeps the session when the refresh fails while the players service is down, and refreshes once it is back', async () => {
    const first = client();
    const id = (await first.register(email(), 'Str0ng!pass')).data.id;
    const heard: (Tokens | undefined)[] = [];
    const stale = { accessToken: `${first.session!.accessToken}x`, refreshToken: first.session!.refreshToken };
    const c = client(stale, (t) => heard.push(t));
    await stack.stopService('players');
    try {
      const err = await failure(c.currencies());
      expect(err).toBeInstanceOf(ApiError);
      expect(err.status).toBeGreaterThanOrEqual(500);
      expect([c.session, heard]).toEqual([stale, []]);
    } finally {
      await stack.startService('players');
    }
    await eventually(async () => expect((await c.me()).data.id).toBe(id));
    expect(heard).toHaveLength(1);
    expect(c.session!.refreshToken).not.toBe(stale.refreshToken);
  });
});
