import { appOf, effectiveOdds, endpoint, GetChestOdds, tableOdds, type ReplyOf } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors, fairnessErrors } from '../errors.js';
import { pityGroupOf } from '../opening/roll-openings.js';
import type { ResolvedChestType } from '../opening/drop-tables.js';
import { findChestType } from '../repositories/chest-types-repo.js';
import { catalogVersion } from '../cache/content-version.js';
import { catalogChestType } from './catalog.js';

type Odds = ReplyOf<typeof GetChestOdds>;

/** The disclosure of one resolved chest type: odds, published rules, pity with its long-run shares, duplicates. */
export function disclose(resolved: ResolvedChestType): Odds {
  const { type, table, content } = resolved;
  const pity = type.rules.pity;
  return {
    chestTypeId: type.id,
    rulesVersion: type.contentVersion,
    ...tableOdds(table, content.rarities),
    rules: type.rules,
    ruleInputs: {
      rarities: content.rarities.map((r) => ({ id: r.id, drop_rate: r.drop_rate, rank: r.rank })),
      collectibles: content.collectibles
        .filter((c) => table.pool.get(c.rarity)?.some((p) => p.id === c.id))
        .map((c) => ({ id: c.id, collection_id: c.collection_id, rarity: c.rarity })),
    },
    pity: pity
      ? {
          rarity: pity.rarity,
          hard: pity.hard,
          softStart: pity.soft_start ?? null,
          softStep: pity.soft_step ?? null,
          group: pityGroupOf(type)!,
          effectiveRarities: effectiveOdds(table, content.rarities).rarities,
        }
      : null,
    duplicates: content.duplicates ?? null,
  };
}

/**
 * chests.v1.get_odds: the exact odds of a catalog chest type, from the rules its rolls use (the
 * current version's, cached per content version), or from an earlier version's rules.
 */
export function getChestOddsEndpoint(deps: ChestsDeps) {
  return endpoint(GetChestOdds, async (req, ctx) => {
    const appId = appOf(ctx);
    const version = await catalogVersion(deps, appId);
    if (version === undefined) throw chestErrors.chestTypeNotFound();
    // The rules in force change when an announced odds change takes effect, with no new content
    // version: the current odds are cached apart while a change is pending, and name it.
    const view = req.rulesVersion === undefined ? await catalogChestType(deps, appId, version, req.chestTypeId) : undefined;
    if (view === null) throw chestErrors.chestTypeNotFound();
    const change = view?.oddsChange;
    const key = `odds:${req.chestTypeId}:${req.rulesVersion ?? 'current'}${change ? `:until:${change.effectiveAt}` : ''}`;
    const odds = await deps.cache.read(appId, version, key, GetChestOdds.reply.nullable(), async (): Promise<Odds | null> => {
      const type = await findChestType(deps.pool, appId, req.chestTypeId, { catalogOnly: true });
      if (!type) return null;
      if (req.rulesVersion === undefined) return disclose(await deps.drops.resolve(appId, type));
      const resolved = await deps.drops.resolveAt(appId, type, req.rulesVersion);
      if (!resolved) throw fairnessErrors.rulesVersionNotFound();
      return disclose(resolved);
    });
    if (!odds) throw chestErrors.chestTypeNotFound();
    return change ? { ...odds, oddsChange: change } : odds;
  });
}
