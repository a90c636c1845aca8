import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AppContentSchema,
  createPool,
  encodeJson,
  OpeningGranted,
  readContentFile,
  startService,
  watchApplied,
  type AppContent,
  type BaseConfig,
  type RunningService,
} from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { createApp } from '../../../services/chests/test/support/chests.js';
import { CollectionsConfigSchema } from '../../../services/collections/src/config.js';
import { collectionsService } from '../../../services/collections/src/service.js';
import { completionReference, settleCompletions } from '../../../services/collections/src/completion/rewards.js';
import { collectionsDb, get, grantAndWait, openingGrant, registerPlayer, waitForContent, type Grant, type TestPlayer } from './support.js';
import { OPENINGS_CONSUMER } from '../../../services/collections/src/consumers/opening-granted.js';

/**
 * Collection rewards (docs/content.md, "Collection rewards"): granted once, when a player first
 * owns every collectible of a collection, as durable messages to the wallet and to chests.
 */
const content = readContentFile();
const REWARDED = content.collections.find((c) => c.completion_reward)!;
const reward = REWARDED.completion_reward!;
/** The rewarded collection cut to its first three collectibles, in an app whose inventories hold `capacity` chests. */
function smallCollectionApp(capacity: number): AppContent {
  const c: AppContent = structuredClone(content);
  c.collections.find((x) => x.id === REWARDED.id)!.collectibles.splice(3);
  c.players.inventory_capacity = capacity;
  c.players.inventory_overflow = 'mailbox';
  return c;
}
const [first, second, third] = REWARDED.collectibles.slice(0, 3).map((i) => ({ collectibleId: i.id, collectionId: REWARDED.id }));

describe('collection completion rewards', () => {
  let stack: TestStack;
  let roomy: { appId: string; publishableKey: string };
  let full: { appId: string; publishableKey: string };
  let replica: RunningService<BaseConfig> | undefined;

  beforeAll(async () => {
    stack = await startStack();
    [roomy, full] = await Promise.all([createApp(stack, smallCollectionApp(100)), createApp(stack, smallCollectionApp(1))]);
    await Promise.all([waitForContent(stack, roomy.publishableKey), waitForContent(stack, full.publishableKey), waitForContent(stack)]);
    // A second collections replica: the grants of one player may be applied by both at once.
    replica = await startService(collectionsService, CollectionsConfigSchema.parse(stack.env) as BaseConfig);
  });
  afterAll(async () => {
    await replica?.stop();
    await stack?.close();
  });

  const balance = async (p: TestPlayer, apiKey: string, code: string) => {
    const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: jsonApiHeaders(apiKey, p.token) });
    return Number(res.json().data.find((c: { attributes: { code: string } }) => c.attributes.code === code).attributes.balance.amount);
  };
  const earnedChests = async (p: TestPlayer, apiKey: string) =>
    (await get(stack, '/api/v1/players/me/chests', p.token, apiKey))
      .json()
      .data.filter((c: { meta: { source: string } }) => c.meta.source === 'earned');
  const completion = async (p: TestPlayer, apiKey: string) =>
    (await get(stack, `/api/v1/collections/${REWARDED.id}`, p.token, apiKey)).json().meta.collection_completeness;
  const sql = async <T extends object>(text: string, params: unknown[]) => {
    const db = await collectionsDb(stack);
    try {
      return (await db.query(text, params)).rows as T[];
    } finally {
      await db.end();
    }
  };
  /** Publishes grants again under new message ids and waits until the consumer has handled them. */
  const redeliver = async (grants: Grant[]) => {
    const ids = grants.map((g) => `again-${g.openingId}`);
    const watch = watchApplied(stack.nc, stack.env.NATS_PREFIX!, ids, OPENINGS_CONSUMER);
    const subject = `${stack.env.NATS_PREFIX}.${OpeningGranted.subject}`;
    for (const [i, g] of grants.entries()) await stack.nc.jetstream().publish(subject, encodeJson(g), { msgID: ids[i]! });
    expect((await watch.done(15_000)).size).toBe(grants.length);
  };
  /** A registered player of `app` whose welcome grants landed. */
  const newPlayer = async (app: { publishableKey: string }) => {
    const p = await registerPlayer(stack, app.publishableKey);
    await eventually(
      async () => expect((await get(stack, '/api/v1/players/me/chests', p.token, app.publishableKey)).json().meta.total_chests).toBe(1),
      20_000,
    );
    return p;
  };

  it('refuses rewards of unknown currencies or chests, and empty ones', () => {
    const withReward = (r: unknown) => ({
      ...content,
      collections: content.collections.map((c) => (c.id === REWARDED.id ? { ...c, completion_reward: r } : c)),
    });
    for (const bad of [{ currencies: { rubies: 5 } }, { chests: ['no-such-chest'] }, {}, { currencies: { gems: 0 } }, { chests: [] }]) {
      expect(AppContentSchema.safeParse(withReward(bad)).success, JSON.stringify(bad)).toBe(false);
    }
    expect(AppContentSchema.safeParse(withReward(reward)).success).toBe(true);
  });

  it('discloses the reward on the collection', async () => {
    const body = (await get(stack, `/api/v1/collections/${REWARDED.id}`)).json();
    expect(body.data.meta).toEqual({ completion_reward: reward });
    const other = (await get(stack, `/api/v1/collections/${content.collections.find((c) => !c.completion_reward)!.id}`)).json();
    expect(other.data.meta).toBeUndefined();
  });

  it('grants the reward exactly once when concurrent grants complete the collection, and never again', async () => {
    const appId = roomy.appId;
    const players = await Promise.all([1, 2, 3, 4].map(() => newPlayer(roomy)));
    const gems = await Promise.all(players.map((p) => balance(p, roomy.publishableKey, 'gems')));
    // Each player's collection is completed by two grants published at once (two replicas consume them).
    const completing = players.map((p) => [openingGrant(appId, p.id, [first!, second!]), openingGrant(appId, p.id, [third!, first!])] as const);
    await Promise.all(completing.map((grants) => grantAndWait(stack, ...grants)));

    for (const [i, p] of players.entries()) {
      await eventually(async () => {
        expect(await balance(p, roomy.publishableKey, 'gems')).toBe(gems[i]! + reward.currencies!.gems!);
        expect((await earnedChests(p, roomy.publishableKey)).length).toBe(reward.chests!.length);
      }, 20_000);
      const meta = await completion(p, roomy.publishableKey);
      expect(meta).toMatchObject({ total_items: 3, unique_items: 3, completion_rate: 1 });
      expect(Date.parse(meta.completed_at)).toBeGreaterThan(Date.now() - 60_000);
      // The collection resource carries it too, in the list and on its own.
      const one = (await get(stack, `/api/v1/collections/${REWARDED.id}`, p.token, roomy.publishableKey)).json();
      expect(one.data.meta).toEqual({ completion_reward: reward, completed_at: meta.completed_at });
      const list = (await get(stack, '/api/v1/collections?page[limit]=100', p.token, roomy.publishableKey)).json();
      const listed = new Map(list.data.map((c: { id: string; meta: { completed_at: string | null } }) => [c.id, c.meta.completed_at]));
      expect(listed.get(REWARDED.id)).toBe(meta.completed_at);
      expect([...listed.values()].filter((at) => at === null)).toHaveLength(content.collections.length - 1);
    }
    // The completing grants re-delivered (re-published under other message ids: the stream cannot
    // tell), then more copies of the collection's items: nothing more.
    await redeliver(completing.flat());
    await grantAndWait(stack, ...players.map((p) => openingGrant(appId, p.id, [second!, third!])));
    await new Promise((r) => setTimeout(r, 500));
    for (const [i, p] of players.entries()) {
      expect(await balance(p, roomy.publishableKey, 'gems')).toBe(gems[i]! + reward.currencies!.gems!);
      expect((await earnedChests(p, roomy.publishableKey)).length).toBe(reward.chests!.length);
      const ledger = await sql<{ n: number }>('SELECT count(*)::int AS n FROM wallet.ledger WHERE player_id = $1 AND reference = $2', [
        p.id,
        completionReference(p.id, REWARDED.id),
      ]);
      expect(ledger[0]!.n).toBe(Object.keys(reward.currencies!).length);
    }
    const rows = await sql<{ n: number }>('SELECT count(*)::int AS n FROM collection_completions WHERE player_id = ANY($1::uuid[])', [
      players.map((p) => p.id),
    ]);
    expect(rows[0]!.n).toBe(players.length);
  });

  it('decides a completion once when many checks race for it, and its messages apply once downstream', async () => {
    const p = await newPlayer(roomy);
    const gems = await balance(p, roomy.publishableKey, 'gems');
    await grantAndWait(stack, openingGrant(roomy.appId, p.id, [first!, second!, third!]));
    await eventually(async () => {
      expect(await balance(p, roomy.publishableKey, 'gems')).toBe(gems + reward.currencies!.gems!);
      expect((await earnedChests(p, roomy.publishableKey)).length).toBe(reward.chests!.length);
    }, 20_000);
    // As if the completion had never been recorded (nor its messages, all delivered): eight checks
    // at once, on eight connections.
    await sql('DELETE FROM collection_completions WHERE player_id = $1', [p.id]);
    await sql("DELETE FROM outbox WHERE payload->>'playerId' = $1", [p.id]);
    const pool = createPool(stack.env.DATABASE_URL!, 'collections', 8);
    try {
      const touched = { appId: roomy.appId, playerId: p.id, collectionIds: new Set([REWARDED.id]), ctx: { requestId: p.id } };
      const results = await Promise.all(Array.from({ length: 8 }, () => settleCompletions(pool, [touched])));
      expect(results.map((r) => r.completions).sort()).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
      const again = results.find((r) => r.completions === 1)!.messages;
      // The rewards, and the collection.completed webhook event (docs/webhooks.md).
      expect(again).toHaveLength((reward.chests?.length ?? 0) + (reward.currencies ? 1 : 0) + 1);
      expect(again.filter((m) => m.subject === 'grants.events').map((m) => (m.payload as { type: string }).type)).toEqual(['collection.completed']);
    } finally {
      await pool.end();
    }
    // Its messages (the same ids, references and inventory chest ids as the first time) are
    // published by the relay and change nothing: the stream, the wallet and chests recognise them.
    await eventually(async () => {
      const pending = await sql<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL', []);
      expect(pending[0]!.n).toBe(0);
    }, 20_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(await balance(p, roomy.publishableKey, 'gems')).toBe(gems + reward.currencies!.gems!);
    expect((await earnedChests(p, roomy.publishableKey)).length).toBe(reward.chests!.length);
  });

  it('records completion without a reward, and shows no completed_at before it', async () => {
    const p = await newPlayer(roomy);
    const other = content.collections.find((c) => !c.completion_reward)!;
    const before = (await get(stack, `/api/v1/collections/${other.id}`, p.token, roomy.publishableKey)).json();
    expect([before.meta.collection_completeness.completed_at, before.data.meta]).toEqual([null, { completed_at: null }]);
    // Anonymous reads have no completed_at at all.
    const anonymous = (await get(stack, `/api/v1/collections/${other.id}`, undefined, roomy.publishableKey)).json();
    expect([anonymous.meta.collection_completeness.completed_at, anonymous.data.meta]).toEqual([undefined, undefined]);
    await grantAndWait(
      stack,
      openingGrant(
        roomy.appId,
        p.id,
        other.collectibles.map((i) => ({ collectibleId: i.id, collectionId: other.id })),
      ),
    );
    const meta = (await get(stack, `/api/v1/collections/${other.id}`, p.token, roomy.publishableKey)).json().meta.collection_completeness;
    expect([meta.completion_rate, typeof meta.completed_at]).toEqual([1, 'string']);
    const resource = (await get(stack, `/api/v1/collections/${other.id}`, p.token, roomy.publishableKey)).json().data;
    expect(resource.meta).toEqual({ completed_at: meta.completed_at });
    const mine = (await get(stack, '/api/v1/players/me/collection', p.token, roomy.publishableKey)).json();
    expect(mine.meta.collections.find((c: { id: string }) => c.id === other.id).completed_at).toBe(meta.completed_at);
    await new Promise((r) => setTimeout(r, 300));
    expect((await earnedChests(p, roomy.publishableKey)).length).toBe(0);
  });

  it('sends the reward chest to the mailbox when the inventory is full', async () => {
    const p = await newPlayer(full);
    const gems = await balance(p, full.publishableKey, 'gems');
    await grantAndWait(stack, openingGrant(full.appId, p.id, [first!, second!, third!]));
    await eventually(async () => {
      const mailbox = (await get(stack, '/api/v1/players/me/mailbox', p.token, full.publishableKey)).json();
      expect(mailbox.data.map((m: { attributes: { source: string } }) => m.attributes.source)).toEqual(reward.chests!.map(() => 'earned'));
      expect(await balance(p, full.publishableKey, 'gems')).toBe(gems + reward.currencies!.gems!);
    }, 20_000);
    expect((await get(stack, '/api/v1/players/me/chests', p.token, full.publishableKey)).json().meta.total_chests).toBe(1);
  });
});
