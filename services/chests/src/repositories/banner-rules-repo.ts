import { z } from 'zod';
import { BannerContentSchema, type AppContent, type BannerContent, type Queryable } from '@ccs/shared';
import { disclosedBannerRules } from '../banners/banner-rules.js';
import { rulesSha256, subjectKey, type VersionRules } from '../fairness/odds-log.js';

/** A banner's rules version in force and the change it announces, if any (migration 0018). */
export interface BannerRulesRow {
  bannerId: string;
  /** The content version whose banner of this slug holds the rules in force. */
  rulesVersion: number;
  /** A change waiting out its notice period: its version and when it takes effect. */
  pending?: { version: number; effectiveAt: Date };
}

interface Row {
  banner_id: string;
  rules_version: number;
  pending_version: number | null;
  pending_effective_at: Date | null;
}

const toRow = (r: Row): BannerRulesRow => ({
  bannerId: r.banner_id,
  rulesVersion: r.rules_version,
  ...(r.pending_version !== null && r.pending_effective_at ? { pending: { version: r.pending_version, effectiveAt: r.pending_effective_at } } : {}),
});

/**
 * The app's banners' rules in force now (`slugs`: only those), by the database's clock: a pending
 * change is in force once its effective time has passed, with no content load needed.
 */
export async function bannerRulesInForce(db: Queryable, appId: string, slugs?: string[]): Promise<Map<string, BannerRulesRow>> {
  const r = await db.query<Row>(
    `SELECT banner_id,
            CASE WHEN pending_effective_at <= now() THEN pending_version ELSE rules_version END AS rules_version,
            CASE WHEN pending_effective_at > now() THEN pending_version END AS pending_version,
            CASE WHEN pending_effective_at > now() THEN pending_effective_at END AS pending_effective_at
       FROM banner_rules WHERE app_id = $1 AND ($2::text[] IS NULL OR banner_id = ANY($2::text[]))`,
    [appId, slugs ?? null],
  );
  return new Map(r.rows.map((row) => [row.banner_id, toRow(row)]));
}

/** The banners of stored content versions, by version (versions not stored are absent). */
async function bannersOfVersions(tx: Queryable, appId: string, versions: number[]): Promise<Map<number, BannerContent[]>> {
  if (!versions.length) return new Map();
  const r = await tx.query<{ version: number; banners: unknown }>(
    'SELECT version, banners FROM content_versions WHERE app_id = $1 AND version = ANY($2::int[])',
    [appId, versions],
  );
  return new Map(r.rows.map((row) => [row.version, row.banners ? z.array(BannerContentSchema).parse(row.banners) : []]));
}

/** What a load does with one banner's row: nothing, its rules in force now, or a pending change. */
type BannerStep = { kind: 'keep' } | { kind: 'now' } | { kind: 'pending'; at: Date };

/**
 * One banner's step, as chest types' (content-repo's noticedChanges): new, or rules equal to those
 * in force, or no notice period: in force now; equal to a pending change: left as it is (its
 * version and time kept); otherwise pending for `hours` from `now`. Logged (with the step's time) when its hash differs
 * from the last one logged; rules equal to those in force and already logged change nothing.
 */
function stepOf(
  hash: string,
  logged: string | undefined,
  inForce: string | undefined,
  pending: { hash?: string; at?: Date },
  hours: number,
  now: Date,
) {
  if (inForce === undefined || hash === inForce) return hash === logged ? { kind: 'keep' as const } : { kind: 'now' as const };
  if (pending.at && hash === pending.hash) return hash === logged ? { kind: 'keep' as const } : { kind: 'pending' as const, at: pending.at };
  return hours > 0 ? { kind: 'pending' as const, at: new Date(now.getTime() + hours * 3_600_000) } : { kind: 'now' as const };
}

/**
 * Applies a content version's banners (inside its load's transaction, under the app's row lock):
 * pending changes already in force are folded in first; then each banner of the content takes the
 * step stepOf gives (a new slug, never seen before, is in force at once). Returns the banners'
 * rules to log, in content order (the caller appends the entries: a banner whose hash is not the
 * last logged one gets an entry, effective when its rules are).
 */
export async function applyBannerRules(
  tx: Queryable,
  appId: string,
  version: number,
  content: AppContent,
  notice: { hours: number; now: Date; logged: Map<string, string> },
): Promise<VersionRules[]> {
  const banners = content.banners ?? [];
  await tx.query(
    `UPDATE banner_rules SET rules_version = pending_version, pending_version = NULL, pending_effective_at = NULL
      WHERE app_id = $1 AND pending_effective_at <= $2`,
    [appId, notice.now],
  );
  const rows = await bannerRulesInForce(
    tx,
    appId,
    banners.map((b) => b.slug),
  );
  const versions = [...rows.values()].flatMap((r) => [r.rulesVersion, ...(r.pending ? [r.pending.version] : [])]);
  const stored = await bannersOfVersions(tx, appId, [...new Set(versions)]);
  const hashAt = (slug: string, v: number | undefined) => {
    const b = v === undefined ? undefined : stored.get(v)?.find((x) => x.slug === slug);
    return b && rulesSha256(disclosedBannerRules(appId, b));
  };
  const out: VersionRules[] = [];
  for (const b of banners) {
    const hash = rulesSha256(disclosedBannerRules(appId, b));
    const row = rows.get(b.slug);
    const logged = notice.logged.get(subjectKey({ bannerId: b.slug }));
    const pending = { hash: hashAt(b.slug, row?.pending?.version), at: row?.pending?.effectiveAt };
    const step: BannerStep = stepOf(hash, logged, row && hashAt(b.slug, row.rulesVersion), pending, notice.hours, notice.now);
    if (step.kind === 'keep') continue;
    await writeStep(tx, appId, b.slug, version, step);
    if (hash !== logged) out.push({ subject: { bannerId: b.slug }, rulesSha256: hash, effectiveAt: step.kind === 'now' ? notice.now : step.at });
  }
  return out;
}

/** Writes a banner's step: in force now (at this version, nothing pending) or pending (the rules in force kept). */
async function writeStep(tx: Queryable, appId: string, slug: string, version: number, step: Exclude<BannerStep, { kind: 'keep' }>): Promise<void> {
  const at = step.kind === 'pending' ? step.at : null;
  await tx.query(
    `INSERT INTO banner_rules (app_id, banner_id, rules_version) VALUES ($1, $2, $3)
     ON CONFLICT (app_id, banner_id) DO UPDATE SET
       rules_version = CASE WHEN $4::timestamptz IS NULL THEN EXCLUDED.rules_version ELSE banner_rules.rules_version END,
       pending_version = CASE WHEN $4::timestamptz IS NULL THEN NULL ELSE EXCLUDED.rules_version END,
       pending_effective_at = $4::timestamptz`,
    [appId, slug, version, at],
  );
}
