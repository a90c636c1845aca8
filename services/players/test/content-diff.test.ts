import { describe, expect, it } from 'vitest';
import { readContentFile } from '@ccs/shared';
import { changedPaths, diffContent, stableJson } from '../src/content/content-diff.js';

describe('content diff', () => {
  const content = readContentFile();

  it('finds nothing between a content and itself, whatever the key order', () => {
    const reordered = JSON.parse(stableJson(content));
    expect(diffContent(content, reordered)).toEqual([]);
  });

  it('names what was added, removed and changed, section by section', () => {
    const next = structuredClone(content);
    next.currencies.push({ code: 'rubies', name: 'Rubies', max_credit: '100', whole: false });
    next.collections[0]!.collectibles.pop();
    next.collections[1]!.name = 'Renamed';
    next.players.inventory_capacity = 50;
    delete next.compliance;
    const removed = content.collections[0]!.collectibles.at(-1)!.id;
    expect(diffContent(content, next)).toEqual([
      { section: 'currencies', added: ['rubies'], removed: [], changed: [], changedFields: {} },
      {
        section: 'collections',
        added: [],
        removed: [],
        changed: [content.collections[1]!.id],
        changedFields: { [content.collections[1]!.id]: ['name'] },
      },
      { section: 'collectibles', added: [], removed: [removed], changed: [], changedFields: {} },
      { section: 'players', added: [], removed: [], changed: ['(rules)'], changedFields: { '(rules)': ['inventory_capacity'] } },
      { section: 'compliance', added: [], removed: ['(rules)'], changed: [], changedFields: {} },
    ]);
  });

  it('names the banners added, removed and changed, by slug', () => {
    const kraken = content.banners!.find((b) => b.slug === 'kraken-rising')!;
    const base = structuredClone(content);
    base.banners = [kraken, { ...kraken, slug: 'tide-call', name: 'Tide Call' }];
    const next = structuredClone(base);
    next.banners![0]!.featured = { ...kraken.featured, share: 0.75 };
    next.banners!.splice(1, 1);
    next.banners!.push({ ...kraken, slug: 'deep-echo', name: 'Deep Echo' });
    expect(diffContent(base, next)).toEqual([
      {
        section: 'banners',
        added: ['deep-echo'],
        removed: ['tide-call'],
        changed: ['kraken-rising'],
        changedFields: { 'kraken-rising': ['featured.share'] },
      },
    ]);
    // A content without banners and one with an empty list say the same; the demo's first banner is one added.
    const none = structuredClone(content);
    delete none.banners;
    expect(diffContent(none, { ...structuredClone(content), banners: [] })).toEqual([]);
    expect(diffContent(none, content)).toEqual([
      { section: 'banners', added: content.banners!.map((b) => b.slug), removed: [], changed: [], changedFields: {} },
    ]);
  });

  it("names the store's products added, removed and changed by id, with what changed in each, and its apple, google and refunds settings", () => {
    const next = structuredClone(content);
    const store = next.store!;
    const gems500 = store.products.find((p) => p.id === 'gems-500')!;
    gems500.name = 'Big Chest of Gems';
    gems500.grants.currencies = { gems: 550 };
    store.products.find((p) => p.id === 'starter-pack')!.grants.chests = [{ chest: 'golden-chest', quantity: 1 }];
    store.products = store.products.filter((p) => p.id !== 'gems-100');
    store.products.push({ id: 'coins-10k', name: 'Sack of Coins', google_product_id: 'coins_10k', grants: { currencies: { coins: 10_000 } } });
    store.apple = { ...store.apple!, environment: 'Production' };
    store.google!.notifications!.audience = 'https://chests.example.com/other';
    store.refunds = { policy: 'debt' };
    expect(diffContent(content, next)).toEqual([
      {
        section: 'store_products',
        added: ['coins-10k'],
        removed: ['gems-100'],
        changed: ['gems-500', 'starter-pack'],
        changedFields: { 'gems-500': ['grants.currencies.gems', 'name'], 'starter-pack': ['grants.chests'] },
      },
      {
        section: 'store',
        added: [],
        removed: [],
        changed: ['apple', 'google', 'refunds'],
        changedFields: { apple: ['environment'], google: ['notifications.audience'], refunds: ['policy'] },
      },
    ]);
    // A store section added or dropped as a whole: its products and settings, each by name.
    const without = structuredClone(content);
    delete without.store;
    expect(diffContent(content, without)).toEqual([
      { section: 'store_products', added: [], removed: ['gems-100', 'gems-500', 'starter-pack'], changed: [], changedFields: {} },
      { section: 'store', added: [], removed: ['apple', 'google', 'refunds'], changed: [], changedFields: {} },
    ]);
    expect(diffContent(without, content).map((d) => [d.section, d.added])).toEqual([
      ['store_products', ['gems-100', 'gems-500', 'starter-pack']],
      ['store', ['apple', 'google', 'refunds']],
    ]);
  });

  it('shows the trading rules as one item: added, changed by path, removed', () => {
    const trading = {
      enabled: true,
      friends_only: true,
      same_rarity: true,
      rarities: { common: { tradable: true, token_cost: 0 } },
      dissolve_keeps: 1,
      offer_ttl_hours: 72,
      min_account_age_hours: 0,
      daily_offer_cap: 20,
    };
    const base = structuredClone(content);
    delete base.trading;
    const next = { ...structuredClone(base), trading };
    expect(diffContent(base, next)).toEqual([{ section: 'trading', added: ['(rules)'], removed: [], changed: [], changedFields: {} }]);
    const changed = structuredClone(next);
    changed.trading.offer_ttl_hours = 24;
    changed.trading.rarities.common.token_cost = 3;
    expect(diffContent(next, changed)).toEqual([
      {
        section: 'trading',
        added: [],
        removed: [],
        changed: ['(rules)'],
        changedFields: { '(rules)': ['offer_ttl_hours', 'rarities.common.token_cost'] },
      },
    ]);
    expect(diffContent(next, base)).toEqual([{ section: 'trading', added: [], removed: ['(rules)'], changed: [], changedFields: {} }]);
  });

  it('names a changed path down to three levels, a list as a whole', () => {
    expect(changedPaths({ a: { b: { c: { d: 1 } } }, l: [1, 2] }, { a: { b: { c: { d: 2 } } }, l: [2, 1] })).toEqual(['a.b.c', 'l']);
    expect(changedPaths({ x: 1, y: 2 }, { y: 2, x: 1 })).toEqual([]);
    expect(changedPaths({ x: 1 }, { x: 1, z: 0 })).toEqual(['z']);
  });
});
