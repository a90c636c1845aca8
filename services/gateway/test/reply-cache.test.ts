import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import {
  AdminLoadContent,
  ContentChanged,
  ListChestTypes,
  ListCollections,
  readContentFile,
  startService,
  type AppContent,
  type BaseConfig,
  type RunningService,
} from '@ccs/shared';
import { withoutOddsNotice } from '@ccs/shared/testing';
import { eventually, jsonApiHeaders, startStack, type ServiceName, type TestStack } from '../../../test/support/stack.js';
import { expectError } from '../../../test/support/jsonapi-schema.js';
import { valueOf } from '../../../test/observability/support/prometheus-text.js';
import { appIdOf, defaultCatalogIds, get, open, registerPlayer, waitForStarterChest } from '../../chests/test/support/chests.js';
import { chestsService } from '../../chests/src/service.js';
import { ChestsConfigSchema } from '../../chests/src/config.js';
import { collectionsService } from '../../collections/src/service.js';
import { CollectionsConfigSchema } from '../../collections/src/config.js';
import { buildApp } from '../src/app.js';
import { GatewayConfigSchema } from '../src/config.js';

const names = (body: { data: { attributes: { name: string } }[] }) => body.data.map((c) => c.attributes.name);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The gateway's reply cache of content-only reads (REPLY_CACHE_TTL_MS). The TTL here is a minute,
// longer than any test: whatever a test sees change, the ContentChanged notice changed.
describe('the gateway reply cache', () => {
  let stack: TestStack;
  let appId: string;
  let ids: Record<string, string>;
  let content: AppContent;

  /** Requests of `subject` that the service's handlers answered with `outcome` (its own metrics). */
  async function handled(service: ServiceName, subject: string, outcome = 'ok'): Promise<number> {
    const text = (await stack.services[service]!.deps.metrics.render()).body;
    return valueOf(text, 'ccs_nats_handler_requests_total', { subject, outcome }) ?? 0;
  }

  /** Loads `next` as the app's new content version; resolves once chests and collections announced it. */
  async function loadContent(next: AppContent): Promise<number> {
    const announced = new Set<string>();
    let heard!: () => void;
    const both = new Promise<void>((resolve) => (heard = resolve));
    const stop = stack.bus.listen(ContentChanged, (n) => {
      if (n.appId !== appId) return;
      announced.add(n.service);
      if (announced.size === 2) heard();
    });
    try {
      const { version } = await stack.bus.request(AdminLoadContent, { appId, content: next }, { requestId: randomUUID() });
      await Promise.race([both, sleep(20_000).then(() => Promise.reject(new Error(`content not announced by both (${[...announced]})`)))]);
      return version;
    } finally {
      stop();
    }
  }

  beforeAll(async () => {
    stack = await startStack({ env: { REPLY_CACHE_TTL_MS: '60000' } });
    appId = await appIdOf(stack);
    ids = await defaultCatalogIds(stack);
    await eventually(async () => expect((await get(stack, '/api/v1/collections')).json().meta.total_count).toBe(5), 20_000);
    content = readContentFile();
  });
  afterAll(async () => stack?.close());

  it('answers a repeated catalog read from memory: chests sees it once, concurrent misses share one request', async () => {
    const url = '/api/v1/chests?sort=name&page[limit]=3';
    const before = await handled('chests', ListChestTypes.subject);
    const first = await get(stack, url);
    expect(first.statusCode, first.body).toBe(200);
    for (let i = 0; i < 5; i++) {
      const again = await get(stack, url);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(first.json());
    }
    expect(await handled('chests', ListChestTypes.subject)).toBe(before + 1);

    const together = await Promise.all(Array.from({ length: 20 }, () => get(stack, '/api/v1/chests?sort=-name')));
    expect(together.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    expect(await handled('chests', ListChestTypes.subject)).toBe(before + 2);
  });

  it('keeps answering cached catalog reads while chests is stopped; an uncached one is 503', async () => {
    const list = await get(stack, '/api/v1/chests');
    const chest = await get(stack, `/api/v1/chests/${ids['Golden Chest']}`);
    const odds = await get(stack, `/api/v1/chests/${ids['Golden Chest']}/odds`);
    for (const r of [list, chest, odds]) expect(r.statusCode, r.body).toBe(200);
    await stack.stopService('chests');
    try {
      expect((await get(stack, '/api/v1/chests')).json()).toEqual(list.json());
      expect((await get(stack, `/api/v1/chests/${ids['Golden Chest']}`)).json()).toEqual(chest.json());
      expect((await get(stack, `/api/v1/chests/${ids['Golden Chest']}/odds`)).json()).toEqual(odds.json());
      expectError(await get(stack, '/api/v1/chests?sort=description'), 503, 'service_unavailable');
      expectError(await get(stack, `/api/v1/chests/${ids['Wooden Chest']}/odds`), 503, 'service_unavailable');
    } finally {
      await stack.startService('chests');
    }
  });

  it('never keeps an error: an unknown chest is asked again each time', async () => {
    const unknown = `/api/v1/chests/${randomUUID()}`;
    const before = await handled('chests', 'chests.v1.get_chest_type', 'not_found');
    expectError(await get(stack, unknown), 404, 'chest_not_found');
    expectError(await get(stack, unknown), 404, 'chest_not_found');
    expect(await handled('chests', 'chests.v1.get_chest_type', 'not_found')).toBe(before + 2);
  });

  it('shows a new content version at once after it loads (the notice), not after the TTL', async () => {
    const collectible = '/api/v1/collectibles/sea-kraken?include=collection';
    const collection = '/api/v1/collections/sea-creatures?include=collectibles';
    const warm = [
      await get(stack, '/api/v1/chests?sort=name'),
      await get(stack, `/api/v1/chests/${ids['Silver Chest']}`),
      await get(stack, `/api/v1/chests/${ids['Silver Chest']}/odds`),
      await get(stack, collectible),
      await get(stack, collection),
      await get(stack, '/api/v1/collections?sort=name'),
    ];
    for (const r of warm) expect(r.statusCode, r.body).toBe(200);

    // Without the demo's KR pack, so the silver chest's new rules roll at once (no notice period).
    const next = withoutOddsNotice(structuredClone(content));
    const silver = next.chests.find((c) => c.id === 'silver-chest')!;
    silver.name = 'Silver Chest Renewed';
    silver.rules.rarity_weights = { common: 1, rare: 1, legendary: 1 };
    const sea = next.collections.find((c) => c.id === 'sea-creatures')!;
    sea.name = 'Sea Creatures Renewed';
    sea.collectibles.find((c) => c.id === 'sea-kraken')!.name = 'Kraken Renewed';
    const version = await loadContent(next);

    expect(names((await get(stack, '/api/v1/chests?sort=name')).json())).toContain('Silver Chest Renewed');
    expect((await get(stack, `/api/v1/chests/${ids['Silver Chest']}`)).json().data.attributes.name).toBe('Silver Chest Renewed');
    const odds = (await get(stack, `/api/v1/chests/${ids['Silver Chest']}/odds`)).json().data.attributes;
    expect(odds.rules_version).toBe(version);
    expect(odds.rarities.map((r: { rarity: string }) => r.rarity)).toEqual(['common', 'rare', 'legendary']);
    const kraken = (await get(stack, collectible)).json();
    expect(kraken.data.attributes.name).toBe('Kraken Renewed');
    expect(kraken.included[0].attributes.name).toBe('Sea Creatures Renewed');
    expect((await get(stack, collection)).json().data.attributes.name).toBe('Sea Creatures Renewed');
    expect(names((await get(stack, '/api/v1/collections?sort=name')).json())).toContain('Sea Creatures Renewed');
    content = next;
  });

  it("never answers a player's progress from the cache, nor shares it with anyone", async () => {
    const p = await registerPlayer(stack);
    await waitForStarterChest(stack, p);
    const collections = content.collections.map((c) => c.id);
    // Anonymous reads are kept (no progress in them); the player's own are read fresh each time.
    for (const id of collections) {
      expect((await get(stack, `/api/v1/collections/${id}`)).json().meta.collection_completeness.unique_items).toBe(0);
      expect((await get(stack, `/api/v1/collections/${id}`, p.token)).json().meta.collection_completeness.unique_items).toBe(0);
    }
    const opened = await open(stack, p, p.starterChestId);
    expect(opened.statusCode, opened.body).toBe(200);
    const item = opened.json().data.collectibles[0] as { id: string; attributes: { collection_id: string } };
    await eventually(async () => {
      const mine = (await get(stack, `/api/v1/collectibles/${item.id}`, p.token)).json().meta;
      expect(mine.owned_by_player).toBe(true);
      expect(mine.collection_progress.current_item).toBeGreaterThanOrEqual(1);
    });
    const theirs = `/api/v1/collections/${item.attributes.collection_id}`;
    expect((await get(stack, theirs, p.token)).json().meta.collection_completeness.unique_items).toBeGreaterThanOrEqual(1);
    // Nobody else sees it: not an anonymous caller (served from the cache), not another player.
    expect((await get(stack, theirs)).json().meta.collection_completeness.unique_items).toBe(0);
    const anonymous = (await get(stack, `/api/v1/collectibles/${item.id}`)).json().meta;
    expect(anonymous.owned_by_player).toBeUndefined();
    const other = await registerPlayer(stack);
    expect((await get(stack, `/api/v1/collectibles/${item.id}`, other.token)).json().meta.owned_by_player).toBe(false);

    // With collections stopped, the kept anonymous reads still answer; a player's read cannot.
    await stack.stopService('collections');
    try {
      expect((await get(stack, `/api/v1/collectibles/${item.id}`)).json().meta).toEqual(anonymous);
      expect((await get(stack, theirs)).statusCode).toBe(200);
      // The list is kept for anonymous callers; a player's has their completions (completed_at), read fresh.
      expect((await get(stack, '/api/v1/collections?sort=name')).statusCode).toBe(200);
      expectError(await get(stack, '/api/v1/collections?sort=name', p.token), 503, 'service_unavailable');
      expectError(await get(stack, `/api/v1/collectibles/${item.id}`, p.token), 503, 'service_unavailable');
      expectError(await get(stack, theirs, p.token), 503, 'service_unavailable');
      expectError(await get(stack, `/api/v1/collections/${item.attributes.collection_id}/collectibles`, p.token), 503, 'service_unavailable');
    } finally {
      await stack.startService('collections');
    }
  });

  it('REPLY_CACHE_TTL_MS=0 turns it off: every read is a request', async () => {
    const config = GatewayConfigSchema.parse({ ...stack.env, REPLY_CACHE_TTL_MS: '0' });
    const uncached: FastifyInstance = await buildApp({ config, bus: stack.bus, redis: stack.redis });
    await uncached.ready();
    try {
      const read = () => uncached.inject({ method: 'GET', url: '/api/v1/chests?sort=id', headers: jsonApiHeaders(stack.apiKey) });
      const before = await handled('chests', ListChestTypes.subject);
      for (let i = 0; i < 3; i++) expect((await read()).statusCode).toBe(200);
      expect(await handled('chests', ListChestTypes.subject)).toBe(before + 3);
      expect(uncached.replyCache.size).toBe(0);
      // The stack's gateway keeps its copy; this one has none to serve while chests is away.
      expect((await get(stack, '/api/v1/chests?sort=id')).statusCode).toBe(200);
      await stack.stopService('chests');
      try {
        expectError(await read(), 503, 'service_unavailable');
        expect((await get(stack, '/api/v1/chests?sort=id')).statusCode).toBe(200);
      } finally {
        await stack.startService('chests');
      }
    } finally {
      await uncached.close();
    }
  });

  // A gateway that dropped its replies on the notice asks again at once, maybe another replica of
  // the service than the one that applied the content: that one must not answer (and so have the
  // gateway keep) the old content for the second its own version pointer lives.
  it.each([
    { service: 'chests' as const, start: () => startService(chestsService, ChestsConfigSchema.parse(stack.env) as BaseConfig) },
    { service: 'collections' as const, start: () => startService(collectionsService, CollectionsConfigSchema.parse(stack.env) as BaseConfig) },
  ])('every $service replica reads the new content version as soon as the notice arrives', async ({ service, start }) => {
    const replica: RunningService<BaseConfig> = await start();
    try {
      const read =
        service === 'chests'
          ? async () =>
              (await stack.bus.request(ListChestTypes, { sort: [], page: { limit: 100, offset: 0 } }, { requestId: randomUUID(), appId })).chests.map(
                (c) => c.name,
              )
          : async () =>
              (
                await stack.bus.request(ListCollections, { sort: [], page: { limit: 100, offset: 0 } }, { requestId: randomUUID(), appId })
              ).collections.map((c) => c.name);
      // Both replicas keep reading (the queue group spreads the reads), so each holds the version in memory.
      let warming = true;
      const warm = (async () => {
        while (warming) {
          await read();
          await sleep(10);
        }
      })();
      await sleep(300);
      const next = structuredClone(content);
      const renamed = `Renamed ${randomUUID().slice(0, 8)}`;
      if (service === 'chests') next.chests.find((c) => c.id === 'wooden-chest')!.name = renamed;
      else next.collections.find((c) => c.id === 'sky-kingdom')!.name = renamed;
      try {
        await loadContent(next);
      } finally {
        warming = false;
        await warm;
      }
      content = next;
      const answers = await Promise.all(Array.from({ length: 30 }, read));
      for (const a of answers) expect(a).toContain(renamed);
    } finally {
      await replica.stop();
    }
  });
});
