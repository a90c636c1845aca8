import { AdminSimulate, endpoint } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestTypeNamed, completeGachasOf } from './admin-drop-inputs.js';
import { rulesInput } from '../simulation/job.js';

/** A deviation as JSON carries it: null where it is infinite (what JSON.stringify made of it before). */
const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * Admin API (the odds simulator): opens the chest type `opens` times with the production roll and
 * pity code on its current rules, in a worker thread, one per app at a time across replicas
 * (../simulation). Opens and records nothing.
 */
export function adminSimulateEndpoint(deps: ChestsDeps) {
  return endpoint(AdminSimulate, async (req) => {
    const type = await chestTypeNamed(deps, req);
    const { content } = await deps.drops.resolve(req.appId, type);
    const r = await deps.simulations.run(req.appId, {
      ...rulesInput(type.rules, content),
      opens: req.opens,
      ...(req.seed ? { seed: req.seed } : {}),
    });
    return {
      chestTypeId: type.id,
      chest: { slug: type.slug, name: type.name, rulesVersion: type.contentVersion },
      opens: r.opens,
      items: r.items,
      rarities: r.rarities.map((x) => ({
        rarity: x.rarity,
        effective: x.effective,
        observed: x.observed,
        count: x.count,
        deviation: finite(x.deviation),
      })),
      chiSquarePValue: { rarities: r.chiSquare.rarities.pValue, collectibles: r.chiSquare.collectibles.pValue },
      pity: r.pity && {
        rarity: r.pity.rarity,
        hard: r.pity.hard,
        hits: r.pity.hits,
        guaranteed: r.pity.guaranteed,
        meanGap: r.pity.gap.mean,
        expectedMeanGap: r.pity.gap.expectedMean,
      },
      completeGachas: completeGachasOf(content.completeGachas, type.slug),
    };
  });
}
