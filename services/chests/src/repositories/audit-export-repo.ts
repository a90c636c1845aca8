import { z } from 'zod';
import { OpenedItemSchema, OpeningPitySchema, type Queryable } from '@ccs/shared';

/** One opening of the auditor's export as stored, with its seed pair (still encrypted). */
export interface AuditOpeningRow {
  id: string;
  player_id: string;
  chest_type_id: string;
  content_version: number;
  opened_at: Date;
  /** opened_at in microseconds since the epoch (exact, for the cursor). */
  at_us: string;
  items: unknown;
  pity: unknown;
  banner: unknown;
  nonce: number | null;
  seed_id: string | null;
  server_seed_hash: string | null;
  client_seed: string | null;
  server_seed_encrypted: string | null;
  revealed_at: Date | null;
}

/** Where a page starts after: the last opening's time (microseconds since the epoch) and id. */
export interface AuditCursor {
  atUs: string;
  id: string;
}

const CURSOR = /^(\d{1,20})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The cursor's text (`<microseconds>.<opening id>`), or undefined when it is not one. */
export const parseAuditCursor = (text: string): AuditCursor | undefined => {
  const m = CURSOR.exec(text);
  return m ? { atUs: m[1]!, id: m[2]! } : undefined;
};
export const auditCursorOf = (r: AuditOpeningRow): string => `${r.at_us}.${r.id}`;

/**
 * One page of the app's openings in [from, to), oldest first (opened_at, id), after `cursor`.
 * The BRIN index on opened_at bounds the scan to the period (and, page after page, to what is left of it).
 */
export async function auditOpeningsPage(
  db: Queryable,
  appId: string,
  period: { from: string; to: string },
  cursor: AuditCursor | undefined,
  limit: number,
): Promise<AuditOpeningRow[]> {
  const r = await db.query<AuditOpeningRow>(
    `SELECT o.id, o.player_id, o.chest_type_id, o.content_version, o.opened_at,
            (extract(epoch FROM o.opened_at) * 1000000)::bigint::text AS at_us,
            o.items, o.pity, o.banner, o.nonce, o.seed_id, s.server_seed_hash, s.client_seed, s.server_seed_encrypted, s.revealed_at
       FROM openings o LEFT JOIN player_seeds s ON s.id = o.seed_id
      WHERE o.app_id = $1 AND o.opened_at >= $2::timestamptz AND o.opened_at < $3::timestamptz
        AND ($4::bigint IS NULL OR (o.opened_at, o.id) > ('epoch'::timestamptz + $4::bigint * interval '1 microsecond', $5::uuid))
      ORDER BY o.opened_at, o.id
      LIMIT $6`,
    [appId, period.from, period.to, cursor?.atUs ?? null, cursor?.id ?? null, limit],
  );
  return r.rows;
}

const ItemsSchema = z.array(OpenedItemSchema);

/** The stored items of an opening, in slot order, as the export lists them. */
export const auditItems = (items: unknown) =>
  ItemsSchema.parse(items)
    .sort((a, b) => a.slot - b.slot)
    .map((it) => ({ slot: it.slot, collectibleId: it.collectibleId, rarity: it.rarity }));

/** The stored pity state of an opening (null: the chest had no pity). */
export const auditPity = (pity: unknown) => (pity ? OpeningPitySchema.parse(pity) : null);
