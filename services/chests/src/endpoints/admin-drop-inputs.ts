import { AdminDropInputs, COMPLETE_GACHA_ADVICE, endpoint, type CompleteGacha } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors } from '../errors.js';
import { findChestType, findChestTypeBySlug, type ChestTypeRecord } from '../repositories/chest-types-repo.js';

/** The app's chest type named by id or by slug, retired ones included (404 chest_not_found). */
export async function chestTypeNamed(
  deps: ChestsDeps,
  req: { appId: string; chestTypeId?: string | undefined; slug?: string | undefined },
): Promise<ChestTypeRecord> {
  const type = req.chestTypeId
    ? await findChestType(deps.pool, req.appId, req.chestTypeId, { catalogOnly: false })
    : await findChestTypeBySlug(deps.pool, req.appId, req.slug!);
  if (!type) {
    const named = req.chestTypeId ? `id ${req.chestTypeId}` : `"${req.slug}"`;
    throw chestErrors.chestTypeNotLoaded(named, req.appId);
  }
  return type;
}

/**
 * Operator command (the odds simulator): a chest type's rules with the rarities and collectibles
 * of the content version they belong to, resolved as openings resolve them (DropTables), so the
 * simulator rolls exactly what an opening of this type rolls. Reads only.
 */
export function adminDropInputsEndpoint(deps: ChestsDeps) {
  return endpoint(AdminDropInputs, async (req) => {
    const type = await chestTypeNamed(deps, req);
    const { content } = await deps.drops.resolve(req.appId, type);
    return {
      chestTypeId: type.id,
      slug: type.slug,
      name: type.name,
      inCatalog: type.inCatalog,
      contentVersion: type.contentVersion,
      rules: type.rules,
      rarities: content.rarities.map((r) => ({ id: r.id, name: r.name, drop_rate: r.drop_rate, rank: r.rank })),
      collectibles: content.collectibles.map((c) => ({ id: c.id, name: c.name, collectionId: c.collection_id, rarity: c.rarity })),
      completeGachas: completeGachasOf(content.completeGachas, type.slug),
    };
  });
}

/** The complete gachas of a content version that `slug` is one of the paid chests of, with what to change. */
export const completeGachasOf = (all: CompleteGacha[], slug: string) =>
  all.filter((g) => g.chests.includes(slug)).map((g) => ({ ...g, advice: COMPLETE_GACHA_ADVICE }));
