import { describe, expect, it } from 'vitest';
import { readContentFile } from '@ccs/shared';
import { diffContent, stableJson } from '../src/content/content-diff.js';

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
      { section: 'currencies', added: ['rubies'], removed: [], changed: [] },
      { section: 'collections', added: [], removed: [], changed: [content.collections[1]!.id] },
      { section: 'collectibles', added: [], removed: [removed], changed: [] },
      { section: 'players', added: [], removed: [], changed: ['(rules)'] },
      { section: 'compliance', added: [], removed: ['(rules)'], changed: [] },
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
    expect(diffContent(base, next)).toEqual([{ section: 'banners', added: ['deep-echo'], removed: ['tide-call'], changed: ['kraken-rising'] }]);
    // A content without banners and one with an empty list say the same; the demo's first banner is one added.
    const none = structuredClone(content);
    delete none.banners;
    expect(diffContent(none, { ...structuredClone(content), banners: [] })).toEqual([]);
    expect(diffContent(none, content)).toEqual([{ section: 'banners', added: content.banners!.map((b) => b.slug), removed: [], changed: [] }]);
  });
});
