import { oddsLogEntries, rulesSha256 } from '../fairness/odds-log.js';
import { appendOddsLog, oddsLogHead } from './odds-log-repo.js';
import { applyBannerRules } from './banner-rules-repo.js';
import { z } from 'zod';
import {
  BannerContentSchema,
  ChestRulesSchema,
  completeGachas,
  complianceInForce,
  ComplianceSchema,
  DuplicatesSchema,
  type AppContent,
  type BannerContent,
  type ChestRules,
  type CompleteGacha,
  type ComplianceRules,
  type DuplicatesRules,
  type Queryable,
  chestTypeId,
} from '@ccs/shared';

/** A rarity as stored with a content version. */
const StoredRaritySchema = z.object({
  id: z.string(),
  name: z.string(),
  drop_rate: z.number(),
  experience: z.number().int(),
  rank: z.number().int(),
});

/** A collectible as stored with a content version: what a roll needs and what an opening shows. */
const StoredCollectibleSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  images: z.array(z.string()),
  collection_id: z.string(),
  rarity: z.string(),
});
export type StoredCollectible = z.infer<typeof StoredCollectibleSchema>;

/** One content version of an app, as the chests service keeps it. */
export interface ContentSnapshot {
  appId: string;
  version: number;
  starterChestType: string;
  inventoryCapacity: number;
  /** Where a granted chest goes when the inventory is full, and how long it waits in the mailbox. */
  inventoryOverflow: 'refuse' | 'mailbox';
  mailboxTtlDays: number;
  /** Time-locked chests a player may have unlocking at once. */
  unlockSlots: number;
  currencies: string[];
  rarities: z.infer<typeof StoredRaritySchema>[];
  collectibles: StoredCollectible[];
  /** The version's complete gachas (domain/complete-gacha.ts), as found at load: none for versions stored before. */
  completeGachas: CompleteGacha[];
  /** The version's duplicate rules (disclosed with the odds), if any. */
  duplicates?: DuplicatesRules;
  /** The version's compliance profile (purchase gates), if any. */
  compliance?: ComplianceRules;
  /** Each chest type's rules in this version, by slug (absent for versions stored before 0005). */
  chestRules?: Record<string, ChestRules>;
  /** The version's gacha banners (docs/design.md §8): none for versions stored before 0017. */
  banners: BannerContent[];
}

/**
 * Stores a content version and, when it is newer than the current one, makes its chest types the
 * catalog (types it leaves out stay for the chests already owned) and its banners' rules in force
 * (or pending, in a notice period), logging what changed. Returns whether the catalog changed.
 * Run inside a transaction: the app's row is locked so versions apply in order.
 */
export async function applyContentVersion(tx: Queryable, appId: string, version: number, content: AppContent): Promise<boolean> {
  const collectibles: StoredCollectible[] = content.collections.flatMap((col) =>
    col.collectibles.map((c) => ({ id: c.id, name: c.name, description: c.description, images: c.images, collection_id: col.id, rarity: c.rarity })),
  );
  await tx.query(
    `INSERT INTO content_versions (app_id, version, starter_chest_type, inventory_capacity, currencies, rarities, collectibles, duplicates, compliance, chest_rules,
       inventory_overflow, mailbox_ttl_days, unlock_slots, complete_gachas, banners)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT (app_id, version) DO NOTHING`,
    [
      appId,
      version,
      content.players.starter_chest_type,
      content.players.inventory_capacity,
      content.currencies.map((c) => c.code),
      JSON.stringify(content.rarities),
      JSON.stringify(collectibles),
      content.duplicates ? JSON.stringify(content.duplicates) : null,
      content.compliance ? JSON.stringify(content.compliance) : null,
      JSON.stringify(Object.fromEntries(content.chests.map((ch) => [ch.id, ch.rules]))),
      content.players.inventory_overflow,
      content.players.mailbox_ttl_days,
      content.players.unlock_slots,
      // Found from the whole content (collections' rewards are not kept here): the simulator names them.
      JSON.stringify(completeGachas(content, content.compliance?.paid_currencies ?? [])),
      JSON.stringify(content.banners ?? []),
    ],
  );
  await tx.query('INSERT INTO apps (app_id, content_version) VALUES ($1, 0) ON CONFLICT (app_id) DO NOTHING', [appId]);
  const current = await tx.query<{ content_version: number }>('SELECT content_version FROM apps WHERE app_id = $1 FOR UPDATE', [appId]);
  if (current.rows[0]!.content_version >= version) return false;

  const now = new Date();
  const changes = await noticedChanges(tx, appId, content, now);
  const ids = await upsertChestTypes(tx, appId, version, content, changes);
  await tx.query('UPDATE chest_types SET in_catalog = false WHERE app_id = $1 AND NOT (id = ANY($2::uuid[]))', [appId, ids]);
  await tx.query('UPDATE apps SET content_version = $2, updated_at = now() WHERE app_id = $1', [appId, version]);
  // The odds log: an entry per chest type, then per banner, whose rules this version changes,
  // under the app's row lock, effective when the change is (in its notice period: at the end of it).
  const head = await oddsLogHead(tx, appId);
  const chests = content.chests.map((ch) => {
    const id = chestTypeId(appId, ch.id);
    return { subject: { chestTypeId: id }, rulesSha256: rulesSha256(ch.rules), effectiveAt: changes.get(id) ?? now };
  });
  const banners = await applyBannerRules(tx, appId, version, content, { hours: noticeHours(content), now, logged: head.rulesOf });
  await appendOddsLog(tx, appId, oddsLogEntries([...chests, ...banners], version, head));
  return true;
}

/**
 * Writes the version's chest types (ids in content order returned). A change in its notice period
 * (`changes`) leaves the rules in force (and their version) as they are and waits in pending_*;
 * otherwise the new rules are in force at once and nothing is pending.
 */
async function upsertChestTypes(tx: Queryable, appId: string, version: number, content: AppContent, changes: Map<string, Date>): Promise<string[]> {
  const ids: string[] = [];
  for (const [position, ch] of content.chests.entries()) {
    const id = chestTypeId(appId, ch.id);
    ids.push(id);
    const rules = JSON.stringify(ch.rules);
    const change = changes.get(id);
    await tx.query(
      `INSERT INTO chest_types (app_id, id, slug, content_version, name, description, images, price, rules, position, in_catalog)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, true)
       ON CONFLICT (app_id, id) DO UPDATE SET name = EXCLUDED.name,
         description = EXCLUDED.description, images = EXCLUDED.images, price = EXCLUDED.price,
         position = EXCLUDED.position, in_catalog = true,
         content_version = CASE WHEN $11::timestamptz IS NULL THEN EXCLUDED.content_version ELSE chest_types.content_version END,
         rules = CASE WHEN $11::timestamptz IS NULL THEN EXCLUDED.rules ELSE chest_types.rules END,
         pending_version = CASE WHEN $11::timestamptz IS NULL THEN NULL ELSE EXCLUDED.content_version END,
         pending_rules = CASE WHEN $11::timestamptz IS NULL THEN NULL ELSE EXCLUDED.rules END,
         pending_effective_at = $11::timestamptz`,
      [appId, id, ch.id, version, ch.name, ch.description, JSON.stringify(ch.images), JSON.stringify(ch.price), rules, position, change ?? null],
    );
  }
  return ids;
}

/**
 * The chest types whose new rules wait out a notice period (docs/design.md §7), with when they take
 * effect. With `compliance.odds_change_notice_hours` = N > 0 (or a rule pack's), a chest type of the catalog whose
 * rules in force differ from the content's waits N hours after `now`, or keeps the effective time
 * of a pending change with the same rules (an unchanged reload restarts no clock, and a notice
 * given stands even if N drops to 0: nothing takes effect before the log says); a newer change
 * replaces a pending one and waits its own N hours; rules equal to those in force cancel a pending
 * change at once. New chest types, and every type when N is 0 or absent, take effect at once.
 * Pending changes already in force are first folded into the rows (`rules`, `content_version`).
 */
async function noticedChanges(tx: Queryable, appId: string, content: AppContent, now: Date): Promise<Map<string, Date>> {
  await tx.query(
    `UPDATE chest_types SET rules = pending_rules, content_version = pending_version,
            pending_version = NULL, pending_rules = NULL, pending_effective_at = NULL
      WHERE app_id = $1 AND pending_effective_at <= $2`,
    [appId, now],
  );
  const hours = noticeHours(content);
  const out = new Map<string, Date>();
  const r = await tx.query<{ id: string; rules: unknown; pending_rules: unknown; pending_effective_at: Date | null }>(
    'SELECT id, rules, pending_rules, pending_effective_at FROM chest_types WHERE app_id = $1 AND in_catalog',
    [appId],
  );
  const rows = new Map(r.rows.map((row) => [row.id, row]));
  for (const ch of content.chests) {
    const id = chestTypeId(appId, ch.id);
    const row = rows.get(id);
    if (!row) continue;
    const hash = rulesSha256(ch.rules);
    if (hash === rulesSha256(row.rules)) continue;
    if (row.pending_effective_at && hash === rulesSha256(row.pending_rules)) out.set(id, row.pending_effective_at);
    else if (hours > 0) out.set(id, new Date(now.getTime() + hours * 3_600_000));
  }
  return out;
}

/** The content's odds change notice period in hours: its own setting, raised by its rule packs (`KR`: at least 24 hours). */
const noticeHours = (content: AppContent): number => (content.compliance && complianceInForce(content.compliance).odds_change_notice_hours) ?? 0;

/** What a grant needs of the app's current content: where a granted chest goes, and the starter type. */
export interface GrantRules {
  starterChestType: string;
  inventoryCapacity: number;
  inventoryOverflow: 'mailbox' | 'refuse';
  mailboxTtlDays: number;
}

/** The app's current content's grant rules, in one statement (not the whole snapshot: a grant needs four columns); undefined before its content arrived. */
export async function grantRules(db: Queryable, appId: string): Promise<GrantRules | undefined> {
  const r = await db.query<{ starter_chest_type: string; inventory_capacity: number; inventory_overflow: string; mailbox_ttl_days: number }>(
    `SELECT v.starter_chest_type, v.inventory_capacity, v.inventory_overflow, v.mailbox_ttl_days
       FROM apps a JOIN content_versions v ON v.app_id = a.app_id AND v.version = a.content_version
      WHERE a.app_id = $1 AND a.content_version > 0`,
    [appId],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  return {
    starterChestType: row.starter_chest_type,
    inventoryCapacity: row.inventory_capacity,
    inventoryOverflow: row.inventory_overflow === 'mailbox' ? 'mailbox' : 'refuse',
    mailboxTtlDays: row.mailbox_ttl_days,
  };
}

/** The app's current content version, or undefined before its content arrived. */
export async function currentContentVersion(db: Queryable, appId: string): Promise<number | undefined> {
  const r = await db.query<{ content_version: number }>('SELECT content_version FROM apps WHERE app_id = $1 AND content_version > 0', [appId]);
  return r.rows[0]?.content_version;
}

/** Reads one stored content version (immutable once written). */
export async function loadContentVersion(db: Queryable, appId: string, version: number): Promise<ContentSnapshot | undefined> {
  const r = await db.query<{
    starter_chest_type: string;
    inventory_capacity: number;
    inventory_overflow: string;
    mailbox_ttl_days: number;
    unlock_slots: number;
    currencies: string[];
    rarities: unknown;
    collectibles: unknown;
    duplicates: unknown;
    compliance: unknown;
    chest_rules: unknown;
    complete_gachas: CompleteGacha[] | null;
    banners: unknown;
  }>(
    `SELECT starter_chest_type, inventory_capacity, inventory_overflow, mailbox_ttl_days, unlock_slots, currencies, rarities, collectibles, duplicates, compliance, chest_rules,
            complete_gachas, banners
     FROM content_versions WHERE app_id = $1 AND version = $2`,
    [appId, version],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  return {
    appId,
    version,
    starterChestType: row.starter_chest_type,
    inventoryCapacity: row.inventory_capacity,
    inventoryOverflow: row.inventory_overflow === 'mailbox' ? 'mailbox' : 'refuse',
    mailboxTtlDays: row.mailbox_ttl_days,
    unlockSlots: row.unlock_slots,
    currencies: row.currencies,
    rarities: z.array(StoredRaritySchema).parse(row.rarities),
    collectibles: z.array(StoredCollectibleSchema).parse(row.collectibles),
    ...(row.duplicates ? { duplicates: DuplicatesSchema.parse(row.duplicates) } : {}),
    ...(row.compliance ? { compliance: ComplianceSchema.parse(row.compliance) } : {}),
    ...(row.chest_rules ? { chestRules: z.record(z.string(), ChestRulesSchema).parse(row.chest_rules) } : {}),
    completeGachas: row.complete_gachas ?? [],
    banners: row.banners ? z.array(BannerContentSchema).parse(row.banners) : [],
  };
}
