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

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How deep into nested objects a changed item's paths go (`grants.currencies.gems`); deeper changes are named by their parent. */
const PATH_DEPTH = 3;

/**
 * The dotted paths at which two values of an item differ, sorted: object keys are followed down
 * to PATH_DEPTH levels, a list counts as one value (`drop_rates` of a chest is one path only if
 * it is a list). Equal values give none.
 */
export function changedPaths(a: unknown, b: unknown, depth = PATH_DEPTH, at = ''): string[] {
  if (stableJson(a) === stableJson(b)) return [];
  if (depth === 0 || !isRecord(a) || !isRecord(b)) return [at || '(value)'];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.flatMap((k) => changedPaths(a[k], b[k], depth - 1, at ? `${at}.${k}` : k));
}

function byId<T>(items: T[], id: (t: T) => string): Map<string, unknown> {
  return new Map(items.map((t) => [id(t), t]));
}

function compare(section: ContentSectionDiff['section'], from: Map<string, unknown>, to: Map<string, unknown>): ContentSectionDiff {
  const changed: [string, string[]][] = [...to]
    .filter(([k]) => from.has(k))
    .map(([k, v]): [string, string[]] => [k, changedPaths(from.get(k), v)])
    .filter(([, paths]) => paths.length > 0);
  return {
    section,
    added: [...to.keys()].filter((k) => !from.has(k)),
    removed: [...from.keys()].filter((k) => !to.has(k)),
    changed: changed.map(([k]) => k),
    changedFields: Object.fromEntries(changed),
  };
}

/** A section that is one item (`(rules)`), absent when the content has none. */
const single = (v: unknown) => new Map<string, unknown>(v === undefined ? [] : [['(rules)', v]]);

/** The store's settings as items: `apple`, `google` and `refunds`, each present when the content has it. */
const storeSettings = (c: AppContent) =>
  new Map<string, unknown>(
    Object.entries({ apple: c.store?.apple, google: c.store?.google, refunds: c.store?.refunds }).filter(([, v]) => v !== undefined),
  );

/**
 * What changed from one content version to another, section by section: currencies (by code),
 * rarities, collections (their own fields), collectibles and chests (by id) added, removed or
 * changed; the players rules, duplicate rules, compliance profile and trading rules as one item each; banners (by
 * slug); the store's products (by id) and its settings (`apple`, `google`, `refunds`). Each
 * changed item names the paths that changed in it. Sections without a change are left out.
 */
export function diffContent(from: AppContent, to: AppContent): ContentSectionDiff[] {
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
  const products = (c: AppContent) => byId(c.store?.products ?? [], (p) => p.id);
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
    compare('store_products', products(from), products(to)),
    compare('store', storeSettings(from), storeSettings(to)),
    compare('trading', single(from.trading), single(to.trading)),
  ].filter((d) => d.added.length || d.removed.length || d.changed.length);
}
