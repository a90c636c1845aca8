import type { AppContent, ContentSectionDiff } from '@ccs/shared';

/** JSON with object keys sorted, so two equal values stored differently (jsonb reorders keys) compare equal. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function byId<T>(items: T[], id: (t: T) => string): Map<string, string> {
  return new Map(items.map((t) => [id(t), stableJson(t)]));
}

function compare(section: ContentSectionDiff['section'], from: Map<string, string>, to: Map<string, string>): ContentSectionDiff {
  return {
    section,
    added: [...to.keys()].filter((k) => !from.has(k)),
    removed: [...from.keys()].filter((k) => !to.has(k)),
    changed: [...to.keys()].filter((k) => from.has(k) && from.get(k) !== to.get(k)),
  };
}

/**
 * What changed from one content version to another, section by section: currencies (by code),
 * rarities, collections (their own fields), collectibles and chests (by id) added, removed or
 * changed; the players rules, duplicate rules and compliance profile as one item each; banners (by
 * slug) added, removed or changed. Sections without a change are left out.
 */
export function diffContent(from: AppContent, to: AppContent): ContentSectionDiff[] {
  const single = (v: unknown) => new Map(v === undefined ? [] : [['(rules)', stableJson(v)]]);
  const collections = (c: AppContent) =>
    byId(
      c.collections.map(({ collectibles: _items, ...rest }) => rest),
      (x) => x.id,
    );
  const collectibles = (c: AppContent) =>
    byId(
      c.collections.flatMap((col) => col.collectibles.map((i) => ({ ...i, collection: col.id }))),
      (x) => x.id,
    );
  return [
    compare(
      'currencies',
      byId(from.currencies, (x) => x.code),
      byId(to.currencies, (x) => x.code),
    ),
    compare(
      'rarities',
      byId(from.rarities, (x) => x.id),
      byId(to.rarities, (x) => x.id),
    ),
    compare('collections', collections(from), collections(to)),
    compare('collectibles', collectibles(from), collectibles(to)),
    compare(
      'chests',
      byId(from.chests, (x) => x.id),
      byId(to.chests, (x) => x.id),
    ),
    compare('players', single(from.players), single(to.players)),
    compare('duplicates', single(from.duplicates), single(to.duplicates)),
    compare('compliance', single(from.compliance), single(to.compliance)),
    compare(
      'banners',
      byId(from.banners ?? [], (x) => x.slug),
      byId(to.banners ?? [], (x) => x.slug),
    ),
  ].filter((d) => d.added.length || d.removed.length || d.changed.length);
}
