import { z } from 'zod';
import { ChestRulesSchema, filterToSql, UnlockRulesSchema, type ChestRules, type ChestTypeView, type FilterNode, type Queryable } from '@ccs/shared';

const PriceSchema = z.record(z.string(), z.number().int());
const ImagesSchema = z.array(z.string());

/** A chest type with its rules and the content version they belong to. */
export interface ChestTypeRecord extends ChestTypeView {
  /** The rules in force now (what openings roll and the odds document discloses). */
  rules: ChestRules;
  /** The content version of the rules in force (an opening's `rules_version`). */
  contentVersion: number;
  inCatalog: boolean;
}

/**
 * SQL for the rules in force of chest type row `t` (docs/design.md §7, odds change notice periods): a
 * pending change (migration 0015) is in force once its effective time has passed, by the
 * database's clock, with no content load needed. Used by every read that rolls or discloses.
 */
export const inForce = (t: string) => ({
  rules: `CASE WHEN ${t}.pending_effective_at <= now() THEN ${t}.pending_rules ELSE ${t}.rules END`,
  contentVersion: `CASE WHEN ${t}.pending_effective_at <= now() THEN ${t}.pending_version ELSE ${t}.content_version END`,
});

interface Row {
  id: string;
  slug: string;
  name: string;
  description: string;
  images: unknown;
  price: unknown;
  rules: unknown;
  content_version: number;
  in_catalog: boolean;
  requires_key: { currency: string; amount: number } | null;
  unlock: unknown;
  pending_version: number | null;
  pending_effective_at: Date | null;
}

const T = inForce('chest_types');
const COLUMNS = `id, slug, name, description, images, price, ${T.rules} AS rules, ${T.contentVersion} AS content_version, in_catalog, requires_key, unlock,
  CASE WHEN pending_effective_at > now() THEN pending_version END AS pending_version,
  CASE WHEN pending_effective_at > now() THEN pending_effective_at END AS pending_effective_at`;
// Filterable and sortable fields → SQL expressions (never user text).
const FIELDS: Record<'id' | 'name' | 'description', string> = { id: 'id::text', name: 'name', description: 'description' };

/** A stored price per currency code; jsonb does not keep key order, so codes are shown alphabetically (coins, gems). */
const priceOf = (stored: unknown): Record<string, number> =>
  Object.fromEntries(Object.entries(PriceSchema.parse(stored)).sort(([a], [b]) => a.localeCompare(b)));

function toRecord(row: Row): ChestTypeRecord {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    images: ImagesSchema.parse(row.images),
    price: priceOf(row.price),
    rules: ChestRulesSchema.parse(row.rules),
    contentVersion: row.content_version,
    inCatalog: row.in_catalog,
    ...(row.requires_key ? { requiresKey: row.requires_key } : {}),
    ...(row.unlock ? { unlock: unlockView(row.unlock) } : {}),
    ...(row.pending_version !== null && row.pending_effective_at
      ? { oddsChange: { effectiveAt: row.pending_effective_at.toISOString(), rulesVersion: row.pending_version } }
      : {}),
  };
}

/** A type's stored `unlock` rules as the catalog shows them. */
function unlockView(stored: unknown): NonNullable<ChestTypeView['unlock']> {
  const u = UnlockRulesSchema.parse(stored);
  return { seconds: u.seconds, ...(u.skip ? { skip: { currency: u.skip.currency, perMinute: u.skip.per_minute } } : {}) };
}

/** Presentation and price of a chest type, without its rules. */
export function toView(r: ChestTypeRecord): ChestTypeView {
  return {
    id: r.id,
    slug: r.slug,
    name: r.name,
    description: r.description,
    images: r.images,
    price: r.price,
    ...(r.requiresKey ? { requiresKey: r.requiresKey } : {}),
    ...(r.unlock ? { unlock: r.unlock } : {}),
    ...(r.oddsChange ? { oddsChange: r.oddsChange } : {}),
  };
}

/** One page of the app's catalog, filtered and sorted (content order by default), and the total. */
export async function listCatalog(
  db: Queryable,
  appId: string,
  q: { filter?: FilterNode; sort: { field: keyof typeof FIELDS; direction: 'asc' | 'desc' }[]; page: { limit: number; offset: number } },
): Promise<{ rows: ChestTypeRecord[]; total: number }> {
  const params: unknown[] = [appId];
  const where = q.filter ? ` AND ${filterToSql(q.filter, FIELDS, params)}` : '';
  const order = [...q.sort.map((s) => `${FIELDS[s.field]} ${s.direction === 'desc' ? 'DESC' : 'ASC'}`), 'position ASC', 'id ASC'].join(', ');
  params.push(q.page.limit, q.page.offset);
  const r = await db.query<Row & { total: number }>(
    `SELECT ${COLUMNS}, count(*) OVER ()::int AS total FROM chest_types
     WHERE app_id = $1 AND in_catalog${where}
     ORDER BY ${order} LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  let total = r.rows[0]?.total;
  if (total === undefined) {
    // An offset past the end returns no rows, so the window count is missing: count apart.
    const c = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM chest_types WHERE app_id = $1 AND in_catalog${where}`,
      params.slice(0, -2),
    );
    total = c.rows[0]!.n;
  }
  return { rows: r.rows.map(toRecord), total };
}

/** A chest type of the app by id; `catalogOnly` hides types no longer on sale. */
export async function findChestType(db: Queryable, appId: string, id: string, opts: { catalogOnly: boolean }): Promise<ChestTypeRecord | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM chest_types WHERE app_id = $1 AND id = $2${opts.catalogOnly ? ' AND in_catalog' : ''}`, [
    appId,
    id,
  ]);
  return r.rows[0] && toRecord(r.rows[0]);
}

/**
 * The catalog prices of chest types by id (per currency code, alphabetically), in one statement; a
 * type not in the catalog (not on sale) is absent.
 */
export async function catalogPrices(db: Queryable, appId: string, ids: string[]): Promise<Map<string, Record<string, number>>> {
  const r = await db.query<{ id: string; price: unknown }>(
    'SELECT id, price FROM chest_types WHERE app_id = $1 AND id = ANY($2::uuid[]) AND in_catalog',
    [appId, ids],
  );
  return new Map(r.rows.map((row) => [row.id, priceOf(row.price)]));
}

/** A chest type of the app by slug (catalog or not). */
export async function findChestTypeBySlug(db: Queryable, appId: string, slug: string): Promise<ChestTypeRecord | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM chest_types WHERE app_id = $1 AND slug = $2`, [appId, slug]);
  return r.rows[0] && toRecord(r.rows[0]);
}
