import {
  appOf,
  buildDropTable,
  callerOf,
  endpoint,
  FAIRNESS_ALGORITHM,
  fairRandom,
  GetFairness,
  GetPlayerOdds,
  guaranteedWithin,
  ListPity,
  rollTable,
  recomputeBannerOpening,
  RotateSeed,
  tableAtCounter,
  tableOdds,
  VerifyOpening,
  withTransaction,
} from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors, fairnessErrors } from '../errors.js';
import { pityGroupOf } from '../opening/roll-openings.js';
import { bannerAsPulled } from '../banners/banners.js';
import { findChestType } from '../repositories/chest-types-repo.js';
import { findOpening } from '../repositories/openings-repo.js';
import { catalogPityTypes, pityCounters } from '../repositories/pity-repo.js';
import { findSeed, lockActiveSeed, rotateSeed, type ActiveSeed } from '../repositories/seeds-repo.js';

const view = (s: ActiveSeed) => ({ serverSeedHash: s.serverSeedHash, clientSeed: s.clientSeed, nonce: s.nextNonce, algorithm: FAIRNESS_ALGORITHM });

/** chests.v1.get_fairness: the caller's active seed pair (committed on first use). */
export function getFairnessEndpoint(deps: ChestsDeps) {
  return endpoint(GetFairness, async (_req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    await deps.cipher.ready();
    return withTransaction(deps.pool, async (tx) => view(await lockActiveSeed(tx, deps.cipher, appId, playerId)));
  });
}

/**
 * chests.v1.rotate_seed: reveals the caller's active pair and commits a new server seed, with a
 * new client seed when given. It locks the pair as an opening does, so no opening straddles it.
 */
export function rotateSeedEndpoint(deps: ChestsDeps) {
  return endpoint(RotateSeed, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    await deps.cipher.ready();
    return withTransaction(deps.pool, async (tx) => {
      const old = await lockActiveSeed(tx, deps.cipher, appId, playerId);
      await rotateSeed(tx, deps.cipher, appId, playerId, old, req.clientSeed ?? old.clientSeed);
      const next = await lockActiveSeed(tx, deps.cipher, appId, playerId);
      return {
        fairness: view(next),
        revealed: {
          serverSeed: await deps.cipher.decrypt(old.serverSeedEncrypted),
          serverSeedHash: old.serverSeedHash,
          clientSeed: old.clientSeed,
          lastNonce: old.nextNonce > 0 ? old.nextNonce - 1 : null,
        },
      };
    });
  });
}

/** chests.v1.list_pity: the caller's counter in each pity group of the current catalog. */
export function listPityEndpoint(deps: ChestsDeps) {
  return endpoint(ListPity, async (_req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const types = await catalogPityTypes(deps.pool, appId);
    const groups = new Map<string, { rarity: string; hard: number; chestTypeIds: string[] }>();
    for (const t of types) {
      const group = pityGroupOf(t)!;
      // The first catalog type of a group states its rule (types of one group should agree).
      const g = groups.get(group) ?? { rarity: t.rules.pity!.rarity, hard: t.rules.pity!.hard, chestTypeIds: [] };
      g.chestTypeIds.push(t.id);
      groups.set(group, g);
    }
    const counters = await pityCounters(deps.pool, appId, playerId, [...groups.keys()]);
    return {
      groups: [...groups].map(([group, g]) => {
        const opensSince = counters.get(group)?.opensSince ?? 0;
        return {
          group,
          rarity: g.rarity,
          opensSince,
          hard: g.hard,
          guaranteedWithin: Math.max(1, g.hard - opensSince),
          chestTypeIds: g.chestTypeIds,
        };
      }),
    };
  });
}

/** chests.v1.player_odds: the caller's odds for their next opening of a catalog chest type, pity applied. */
export function playerOddsEndpoint(deps: ChestsDeps) {
  return endpoint(GetPlayerOdds, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const type = await findChestType(deps.pool, appId, req.chestTypeId, { catalogOnly: true });
    if (!type) throw chestErrors.chestTypeNotFound();
    const resolved = await deps.drops.resolve(appId, type);
    const group = pityGroupOf(type);
    const counter = group ? ((await pityCounters(deps.pool, appId, playerId, [group])).get(group)?.opensSince ?? 0) : 0;
    const odds = tableOdds(tableAtCounter(resolved.table, counter), resolved.content.rarities);
    return {
      opensSincePity: group ? counter : null,
      guaranteedWithin: resolved.table.pity ? guaranteedWithin(resolved.table.pity, counter) : null,
      rarities: odds.rarities,
    };
  });
}

/** chests.v1.verify_opening: recomputes one of the caller's openings from its revealed seed. */
export function verifyOpeningEndpoint(deps: ChestsDeps) {
  return endpoint(VerifyOpening, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const found = await findOpening(deps.pool, appId, playerId, req.openingId);
    if (!found) throw fairnessErrors.openingNotFound();
    const { view: opening, seedId } = found;
    if (!seedId || !opening.fairness) throw fairnessErrors.notVerifiable();
    const seed = await findSeed(deps.pool, appId, playerId, seedId);
    if (!seed?.revealedAt) throw fairnessErrors.seedNotRevealed();
    const type = await findChestType(deps.pool, appId, opening.chestTypeId, { catalogOnly: false });
    const resolved = type && (await deps.drops.resolveAt(appId, type, opening.rulesVersion));
    if (!resolved) throw fairnessErrors.notVerifiable();
    const serverSeed = await deps.cipher.decrypt(seed.serverSeedEncrypted);
    const before = opening.pity?.opensSinceBefore ?? 0;
    // Built afresh from the published inputs, as a verifier would (not the cached roll table).
    const table = buildDropTable(
      resolved.type.rules,
      resolved.content.rarities,
      resolved.content.collectibles.map((c) => ({ id: c.id, collectionId: c.collection_id, rarity: c.rarity })),
    );
    const random = fairRandom(serverSeed, seed.clientSeed, opening.fairness.nonce);
    // A banner pull's opening: the banner's draw (the 50/50, the flag it started with, the floor's re-roll).
    // At the banner rules version the pull recorded: the rules it had in force.
    const banner = opening.banner && (await bannerAsPulled(deps, appId, opening.banner, resolved.content));
    if (opening.banner && !banner) throw fairnessErrors.notVerifiable();
    const rolled =
      opening.banner && banner
        ? recomputeBannerOpening(
            table,
            banner,
            { pityBefore: before, guaranteedBefore: opening.banner.guaranteedBefore, floorRerolled: opening.banner.floorRerolled },
            random,
          )
        : rollTable(tableAtCounter(table, before), random);
    const recomputed = rolled.map((it) => ({ slot: it.slot, collectibleId: it.collectibleId, rarity: it.rarity }));
    const stored = opening.items.map((it) => ({ slot: it.slot, collectibleId: it.collectibleId, rarity: it.rarity }));
    return {
      openingId: opening.openingId,
      chestTypeId: opening.chestTypeId,
      rulesVersion: opening.rulesVersion,
      algorithm: FAIRNESS_ALGORITHM,
      serverSeed,
      serverSeedHash: seed.serverSeedHash,
      clientSeed: seed.clientSeed,
      nonce: opening.fairness.nonce,
      opensSinceBefore: opening.pity ? before : null,
      rules: resolved.type.rules,
      recomputed,
      matches: JSON.stringify(recomputed) === JSON.stringify(stored),
    };
  });
}
