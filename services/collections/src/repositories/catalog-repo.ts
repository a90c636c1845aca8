import { filterToSql, type CollectibleView, type CollectionView, type FilterNode, type Queryable } from '@ccs/shared';

/** A requested order: field names are checked against the maps below, never interpolated as given. */
export interface SortKey {
  field: string;
  direction: 'asc' | 'desc';
}

const COLLECTION_ORDER: Record<string, string> = { id: 'c.id', name: 'c.name' };
const COLLECTIBLE_ORDER: Record<string, string> = { id: 'i.id', name: 'i.name', collection_id: 'i.collection_id', rarity: 'r.rank' };
const COLLECTIBLE_FILTER: Record<string, string> = { collection_id: 'i.collection_id', rarity: 'i.rarity' };

/** ORDER BY for a sort request, ending with the content file's order (stable pages). */
function orderBy(sort: SortKey[], columns: Record<string, string>, tail: string): string {
  const keys = sort.map((s) => {
    const col = columns[s.field];
    if (!col) throw new Error(`unsortable field ${s.field}`);
    return `${col} ${s.direction === 'desc' ? 'DESC' : 'ASC'}`;
  });
  return [...keys, tail].join(', ');
}

const COLLECTION_COLUMNS = `c.id, c.name, c.description, c.completion_reward,
  COALESCE((SELECT json_agg(i.id ORDER BY i.position) FROM collectibles i
             WHERE i.app_id = c.app_id AND i.collection_id = c.id AND i.retired_at IS NULL), '[]'::json) AS collectible_ids`;

interface CollectionRow {
  id: string;
  name: string;
  description: string;
  collectible_ids: string[];
  completion_reward: CollectionView['completionReward'] | null;
}

const toCollection = (r: CollectionRow): CollectionView => ({
  id: r.id,
  name: r.name,
  description: r.description,
  collectibleIds: r.collectible_ids,
  ...(r.completion_reward ? { completionReward: r.completion_reward } : {}),
});

const COLLECTIBLE_COLUMNS = 'i.id, i.name, i.description, i.collection_id, i.images, i.rarity';
const COLLECTIBLE_FROM = `collectibles i LEFT JOIN rarities r ON r.app_id = i.app_id AND r.id = i.rarity`;

interface CollectibleRow {
  id: string;
  name: string;
  description: string;
  collection_id: string;
  images: string[];
  rarity: string;
}

const toCollectible = (r: CollectibleRow): CollectibleView => ({
  id: r.id,
  name: r.name,
  description: r.description,
  collectionId: r.collection_id,
  images: r.images,
  rarity: r.rarity,
});

/** The app's current content version, undefined before its first content arrived. */
export async function contentVersion(q: Queryable, appId: string): Promise<number | undefined> {
  const r = await q.query<{ v: number }>('SELECT content_version AS v FROM apps WHERE app_id = $1', [appId]);
  return r.rows[0]?.v;
}

/** One page of the app's current collections and how many there are. */
export async function listCollections(q: Queryable, appId: string, page: { limit: number; offset: number }, sort: SortKey[]) {
  const [count, rows] = await Promise.all([
    q.query<{ n: number }>('SELECT count(*)::int AS n FROM collections WHERE app_id = $1 AND retired_at IS NULL', [appId]),
    q.query<CollectionRow>(
      `SELECT ${COLLECTION_COLUMNS} FROM collections c WHERE c.app_id = $1 AND c.retired_at IS NULL
       ORDER BY ${orderBy(sort, COLLECTION_ORDER, 'c.position')} LIMIT $2 OFFSET $3`,
      [appId, page.limit, page.offset],
    ),
  ]);
  return { total: count.rows[0]!.n, collections: rows.rows.map(toCollection) };
}

/** Every current collection of the app, in content order. */
export async function allCollections(q: Queryable, appId: string): Promise<CollectionView[]> {
  const r = await q.query<CollectionRow>(
    `SELECT ${COLLECTION_COLUMNS} FROM collections c WHERE c.app_id = $1 AND c.retired_at IS NULL ORDER BY c.position`,
    [appId],
  );
  return r.rows.map(toCollection);
}

/** One current collection, or null. */
export async function findCollection(q: Queryable, appId: string, id: string): Promise<CollectionView | null> {
  const r = await q.query<CollectionRow>(
    `SELECT ${COLLECTION_COLUMNS} FROM collections c WHERE c.app_id = $1 AND c.id = $2 AND c.retired_at IS NULL`,
    [appId, id],
  );
  return r.rows[0] ? toCollection(r.rows[0]) : null;
}

/** The current collectibles of one collection. */
export async function collectiblesOf(q: Queryable, appId: string, collectionId: string, sort: SortKey[]): Promise<CollectibleView[]> {
  const r = await q.query<CollectibleRow>(
    `SELECT ${COLLECTIBLE_COLUMNS} FROM ${COLLECTIBLE_FROM}
      WHERE i.app_id = $1 AND i.collection_id = $2 AND i.retired_at IS NULL
      ORDER BY ${orderBy(sort, COLLECTIBLE_ORDER, 'i.position')}`,
    [appId, collectionId],
  );
  return r.rows.map(toCollectible);
}

/** One page of the app's current collectibles matching a filter, and how many match. */
export async function listCollectibles(
  q: Queryable,
  appId: string,
  filter: FilterNode | undefined,
  page: { limit: number; offset: number },
  sort: SortKey[],
) {
  const params: unknown[] = [appId];
  const where = `i.app_id = $1 AND i.retired_at IS NULL${filter ? ` AND ${filterToSql(filter, COLLECTIBLE_FILTER, params)}` : ''}`;
  const [count, rows] = await Promise.all([
    q.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${COLLECTIBLE_FROM} WHERE ${where}`, params),
    q.query<CollectibleRow>(
      `SELECT ${COLLECTIBLE_COLUMNS} FROM ${COLLECTIBLE_FROM} WHERE ${where}
       ORDER BY ${orderBy(sort, COLLECTIBLE_ORDER, 'i.position')}
       LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, page.limit, page.offset],
    ),
  ]);
  return { total: count.rows[0]!.n, collectibles: rows.rows.map(toCollectible) };
}

/** One current collectible with its rarity's base drop rate, or null. */
export async function findCollectible(q: Queryable, appId: string, id: string) {
  const r = await q.query<CollectibleRow & { drop_rate: number | null }>(
    `SELECT ${COLLECTIBLE_COLUMNS}, r.drop_rate FROM ${COLLECTIBLE_FROM}
      WHERE i.app_id = $1 AND i.id = $2 AND i.retired_at IS NULL`,
    [appId, id],
  );
  const row = r.rows[0];
  if (!row) return null;
  return { collectible: toCollectible(row), rarityInfo: { level: row.rarity, dropRate: row.drop_rate ?? 0 } };
}
