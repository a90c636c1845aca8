import { appOf, endpoint, GetObservedOdds } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors, fairnessErrors } from '../errors.js';
import { observedAgainstDisclosed } from '../fairness/observed-odds.js';
import { drawnItems } from '../repositories/chest-drops-repo.js';
import { findChestType } from '../repositories/chest-types-repo.js';

/**
 * chests.v1.observed_odds (docs/design.md §7, "Observed odds in public"): a catalog chest's kept
 * openings under one rules version (the current one unless asked), per rarity against what that
 * version disclosed, with a chi-square p-value. Aggregates of the app's openings, nobody's own.
 * Never cached: every opening changes it.
 */
export function observedOddsEndpoint(deps: ChestsDeps) {
  return endpoint(GetObservedOdds, async (req, ctx) => {
    const appId = appOf(ctx);
    const type = await findChestType(deps.pool, appId, req.chestTypeId, { catalogOnly: true });
    if (!type) throw chestErrors.chestTypeNotFound();
    const resolved =
      req.rulesVersion === undefined ? await deps.drops.resolve(appId, type) : await deps.drops.resolveAt(appId, type, req.rulesVersion);
    if (!resolved) throw fairnessErrors.rulesVersionNotFound();
    const version = resolved.type.contentVersion;
    const seen = await drawnItems(deps.pool, appId, type.id, version);
    return {
      chestTypeId: type.id,
      rulesVersion: version,
      openings: seen.openings,
      since: seen.since?.toISOString() ?? null,
      ...observedAgainstDisclosed(resolved, seen),
    };
  });
}
