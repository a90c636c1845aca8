import {
  AdminExportBannerRules,
  AdminExportOpenings,
  AdminExportRules,
  AdminOddsLog,
  AppError,
  endpoint,
  OpeningBannerSchema,
  type AuditOpening,
} from '@ccs/shared';
import { bannerAsPulled, bannerAt } from '../banners/banners.js';
import { disclosedBannerRules } from '../banners/banner-rules.js';
import type { ChestsDeps } from '../deps.js';
import { catalogVersion } from '../cache/content-version.js';
import { findChestType } from '../repositories/chest-types-repo.js';
import { listOddsLog } from '../repositories/odds-log-repo.js';
import {
  auditCursorOf,
  auditItems,
  auditOpeningsPage,
  auditPity,
  parseAuditCursor,
  type AuditOpeningRow,
} from '../repositories/audit-export-repo.js';
import { disclose } from './catalog-odds.js';

// The auditor's export (docs/design.md §7, `npm run admin -- export-audit`): operator subjects that read
// an app's openings with their revealed seeds, the rules they rolled, and the odds log.

/** 404 app_not_found unless chests holds content of the app (every app has some from its creation). */
async function requireApp(deps: ChestsDeps, appId: string): Promise<void> {
  if ((await catalogVersion(deps, appId)) === undefined) throw AppError.notFound('app_not_found', `No app ${appId}.`);
}

/** A banner opening's banner rules as it rolled them (bannerAsPulled), disclosed as the odds log hashes them, for the export. */
type BannerRulesOf = (
  r: AuditOpeningRow,
  banner: { bannerId: string; rulesVersion?: number },
) => Promise<NonNullable<AuditOpening['banner']>['rules']>;

/** One stored opening as the export lists it; `seedOf` decrypts a revealed pair's server seed. */
async function toAuditOpening(r: AuditOpeningRow, seedOf: (row: AuditOpeningRow) => Promise<string>, rulesOf: BannerRulesOf): Promise<AuditOpening> {
  const banner = r.banner ? OpeningBannerSchema.parse(r.banner) : undefined;
  const fair = r.server_seed_hash !== null && r.client_seed !== null && r.nonce !== null;
  return {
    openingId: r.id,
    playerId: r.player_id,
    chestTypeId: r.chest_type_id,
    rulesVersion: r.content_version,
    openedAt: r.opened_at.toISOString(),
    items: auditItems(r.items),
    pity: auditPity(r.pity),
    fairness: fair
      ? {
          serverSeedHash: r.server_seed_hash!,
          clientSeed: r.client_seed!,
          nonce: r.nonce!,
          serverSeed: r.revealed_at ? await seedOf(r) : null,
          revealedAt: r.revealed_at?.toISOString() ?? null,
        }
      : null,
    banner: banner
      ? {
          bannerId: banner.bannerId,
          featured: banner.featured,
          guaranteedBefore: banner.guaranteedBefore,
          floorRerolled: banner.floorRerolled,
          rulesVersion: banner.rulesVersion ?? null,
          rules: await rulesOf(r, banner),
        }
      : null,
  };
}

/**
 * The banner rules of the export's banner openings, looked up once per (banner, rules version),
 * or, for openings recorded without one, per (chest type, rules version, banner).
 */
function bannerRules(deps: ChestsDeps, appId: string): BannerRulesOf {
  const memo = new Map<string, ReturnType<BannerRulesOf>>();
  return (r, pulled) => {
    const key =
      pulled.rulesVersion !== undefined ? `${pulled.bannerId}@${pulled.rulesVersion}` : `${r.chest_type_id}:${r.content_version}:${pulled.bannerId}`;
    let hit = memo.get(key);
    if (!hit) {
      hit = (async () => {
        const type = await findChestType(deps.pool, appId, r.chest_type_id, { catalogOnly: false });
        const resolved = type && (await deps.drops.resolveAt(appId, type, r.content_version));
        const b = resolved && (await bannerAsPulled(deps, appId, pulled, resolved.content));
        return b ? disclosedBannerRules(appId, b) : null;
      })();
      memo.set(key, hit);
    }
    return hit;
  };
}

/** chests.v1.admin_export_openings: a page of the app's openings of a period, revealed seeds decrypted. */
export function adminExportOpeningsEndpoint(deps: ChestsDeps) {
  return endpoint(AdminExportOpenings, async (req) => {
    const cursor = req.cursor === undefined ? undefined : parseAuditCursor(req.cursor);
    if (req.cursor !== undefined && !cursor) throw AppError.badRequest('invalid_cursor', 'The cursor is not one a previous page answered.');
    await requireApp(deps, req.appId);
    const rows = await auditOpeningsPage(deps.pool, req.appId, req, cursor, req.limit);
    await deps.cipher.ready();
    const seeds = new Map<string, Promise<string>>();
    const seedOf = (row: AuditOpeningRow) => {
      let s = seeds.get(row.seed_id!);
      if (!s) seeds.set(row.seed_id!, (s = deps.cipher.decrypt(row.server_seed_encrypted!)));
      return s;
    };
    const rulesOf = bannerRules(deps, req.appId);
    const openings = await Promise.all(rows.map((r) => toAuditOpening(r, seedOf, rulesOf)));
    return { openings, nextCursor: rows.length === req.limit ? auditCursorOf(rows[rows.length - 1]!) : null };
  });
}

/** chests.v1.admin_export_rules: the rules (and rule inputs) of chest types at content versions. */
export function adminExportRulesEndpoint(deps: ChestsDeps) {
  return endpoint(AdminExportRules, async (req) => {
    await requireApp(deps, req.appId);
    const out = [];
    for (const v of req.versions) {
      const type = await findChestType(deps.pool, req.appId, v.chestTypeId, { catalogOnly: false });
      const resolved = type && (await deps.drops.resolveAt(req.appId, type, v.rulesVersion));
      if (!resolved) continue;
      const { rules, ruleInputs } = disclose(resolved);
      out.push({ chestTypeId: v.chestTypeId, rulesVersion: v.rulesVersion, rules, ruleInputs });
    }
    return { rules: out };
  });
}

/** chests.v1.admin_export_banner_rules: the rules of banners at rules versions, as their odds documents disclose them. */
export function adminExportBannerRulesEndpoint(deps: ChestsDeps) {
  return endpoint(AdminExportBannerRules, async (req) => {
    await requireApp(deps, req.appId);
    const out = [];
    for (const v of req.versions) {
      const b = await bannerAt(deps, req.appId, v.bannerId, v.rulesVersion);
      if (b) out.push({ bannerId: v.bannerId, rulesVersion: v.rulesVersion, rules: disclosedBannerRules(req.appId, b) });
    }
    return { rules: out };
  });
}

/** chests.v1.admin_odds_log: a page of an app's odds log for an operator. */
export function adminOddsLogEndpoint(deps: ChestsDeps) {
  return endpoint(AdminOddsLog, async (req) => {
    await requireApp(deps, req.appId);
    return listOddsLog(deps.pool, req.appId, req.page);
  });
}
