import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { encodeJson, grantsStream, OpeningGranted, watchApplied } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../../../test/support/stack.js';
import { expectError, expectJsonApi } from '../../../test/support/jsonapi-schema.js';
import { OPENINGS_CONSUMER } from '../src/consumers/opening-granted.js';
import {
  appIdOf,
  collectionsDb,
  get,
  grantAndWait,
  openingGrant,
  publishGrant,
  registerPlayer,
  waitForContent,
  type Grant,
  type TestPlayer,
} from './support.js';

const relic = (collectibleId: string) => ({ collectibleId, collectionId: 'ancient-relics' });
const sea = (collectibleId: string) => ({ collectibleId, collectionId: 'sea-creatures' });

describe('grants of chest openings', () => {
  let stack: TestStack;
  let appId: string;
  let db: pg.Client;

  beforeAll(async () => {
    stack = await startStack();
    await waitForContent(stack);
    appId = await appIdOf(stack);
    db = await collectionsDb(stack);
  });
  afterAll(async () => {
    await db?.end();
    await stack?.close();
  });

  const rowsOf = async (openingId: string) =>
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM owned_collectibles WHERE opening_id = $1', [openingId])).rows[0]!.n;
  const ownedCount = async (player: TestPlayer, id: string) => (await get(stack, `/api/v1/collectibles/${id}`, player.token)).json().meta.owned_count;

  it('applies a grant delivered twice only once, whether or not the stream de-duplicates it', async () => {
    const player = await registerPlayer(stack);
    const grant = openingGrant(appId, player.id, [relic('ancient-sun-disk'), relic('ancient-jade-scarab')]);
    await grantAndWait(stack, grant);
    // The same message again inside the duplicate window: the stream drops it.
    const again = await publishGrant(stack, grant);
    expect(again.duplicate).toBe(true);
    // The same opening under another message id (a re-publish the stream cannot recognise).
    const watch = watchApplied(stack.nc, stack.env.NATS_PREFIX!, ['other-id-' + grant.openingId], OPENINGS_CONSUMER);
    await stack.nc
      .jetstream()
      .publish(`${stack.env.NATS_PREFIX}.${OpeningGranted.subject}`, encodeJson(grant), { msgID: 'other-id-' + grant.openingId });
    expect((await watch.done(10_000)).size).toBe(1);
    expect(await rowsOf(grant.openingId)).toBe(2);
    expect(await ownedCount(player, 'ancient-sun-disk')).toBe(1);
  });

  it("applies a grant re-delivered after JetStream's duplicate window only once", async () => {
    const player = await registerPlayer(stack);
    const grant = openingGrant(appId, player.id, [sea('sea-octopus')]);
    await grantAndWait(stack, grant);
    const stream = grantsStream(stack.env.NATS_PREFIX!);
    const info = await stack.services.collections!.deps.jsm.streams.info(stream);
    const original = info.config.duplicate_window;
    await stack.services.collections!.deps.jsm.streams.update(stream, { ...info.config, duplicate_window: 100 * 1e6 });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const watch = watchApplied(stack.nc, stack.env.NATS_PREFIX!, [grant.openingId], OPENINGS_CONSUMER);
      const ack = await publishGrant(stack, grant);
      // Past the window the stream stores it again, so the consumer really sees it twice.
      expect(ack.duplicate).toBe(false);
      expect((await watch.done(10_000)).size).toBe(1);
    } finally {
      await stack.services.collections!.deps.jsm.streams.update(stream, { ...info.config, duplicate_window: original });
    }
    expect(await rowsOf(grant.openingId)).toBe(1);
    expect(await ownedCount(player, 'sea-octopus')).toBe(1);
    // The per-player tally counted the item once too.
    const tally = await db.query('SELECT copies FROM player_collectibles WHERE player_id = $1 AND collectible_id = $2', [player.id, 'sea-octopus']);
    expect(tally.rows).toEqual([{ copies: 1 }]);
  });

  it('counts duplicates of a collectible instead of losing them, and unique items once', async () => {
    const player = await registerPlayer(stack);
    await grantAndWait(
      stack,
      openingGrant(appId, player.id, [relic('ancient-golden-mask'), relic('ancient-golden-mask'), relic('ancient-clay-amulet')]),
      openingGrant(appId, player.id, [relic('ancient-golden-mask')]),
    );
    expect(await ownedCount(player, 'ancient-golden-mask')).toBe(3);
    const collection = (await get(stack, '/api/v1/collections/ancient-relics', player.token)).json();
    expect(collection.meta.collection_completeness).toEqual({ total_items: 12, unique_items: 2, completion_rate: 2 / 12, completed_at: null });
    const mine = (await get(stack, '/api/v1/players/me/collection', player.token)).json();
    expectJsonApi(mine);
    expect(mine.meta).toMatchObject({ total_count: 2, total_copies: 4 });
  });

  it('adds the experience of an opening to the player once, however often it is delivered', async () => {
    const player = await registerPlayer(stack);
    const grant: Grant = { ...openingGrant(appId, player.id, [sea('sea-narwhal')]), experience: 125 };
    const watch = watchApplied(stack.nc, stack.env.NATS_PREFIX!, [grant.openingId], 'players-experience');
    await publishGrant(stack, grant);
    expect((await watch.done(10_000)).size).toBe(1);
    const again = watchApplied(stack.nc, stack.env.NATS_PREFIX!, ['again-' + grant.openingId], 'players-experience');
    await stack.nc
      .jetstream()
      .publish(`${stack.env.NATS_PREFIX}.${OpeningGranted.subject}`, encodeJson(grant), { msgID: 'again-' + grant.openingId });
    expect((await again.done(10_000)).size).toBe(1);
    const me = await stack.inject({
      method: 'GET',
      url: '/api/v1/players/me',
      headers: { apikey: stack.apiKey, authorization: `Bearer ${player.token}` },
    });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json().data.attributes.experience).toBe(125);
  });

  it('applies every one of 20 grants published while the service was stopped exactly once after it restarts', async () => {
    const player = await registerPlayer(stack);
    await stack.stopService('collections');
    const relics = ['ancient-clay-amulet', 'ancient-bronze-coin', 'ancient-carved-totem'];
    const grants = Array.from({ length: 20 }, () => openingGrant(appId, player.id, relics.map(relic)));
    for (const g of grants) await publishGrant(stack, g);
    // Meanwhile reads fail fast with a clear 503 instead of hanging (a player's read: the gateway
    // may still answer an anonymous catalog read from its reply cache for a second).
    expectError(await get(stack, '/api/v1/players/me/collection', player.token), 503, 'service_unavailable');
    const watch = watchApplied(
      stack.nc,
      stack.env.NATS_PREFIX!,
      grants.map((g) => g.openingId),
      OPENINGS_CONSUMER,
    );
    await stack.startService('collections');
    expect((await watch.done(20_000)).size).toBe(20);
    const counts = await db.query<{ opening_id: string; n: number }>(
      'SELECT opening_id, count(*)::int AS n FROM owned_collectibles WHERE opening_id = ANY($1::uuid[]) GROUP BY opening_id',
      [grants.map((g) => g.openingId)],
    );
    expect(counts.rows).toHaveLength(20);
    expect(counts.rows.every((r) => r.n === 3)).toBe(true);
    // The demo content keeps 3 copies of a collectible (duplicates.max_copies); the other 17 of each are converted.
    await eventually(async () => expect(await ownedCount(player, 'ancient-bronze-coin')).toBe(3));
    const mine = (await get(stack, '/api/v1/players/me/collection', player.token)).json();
    expect(mine.meta).toMatchObject({ total_count: 3, total_copies: 9 });
    const converted = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM owned_collectibles WHERE opening_id = ANY($1::uuid[]) AND converted_currency IS NOT NULL',
      [grants.map((g) => g.openingId)],
    );
    expect(converted.rows[0]!.n).toBe(51);
  });
});
