// Banner pulls (docs/fairness.md, "Banner pulls"), restated with nothing but plain JavaScript so
// that an auditor needs none of the service's code: the featured roll, the guarantee, the ten-pull
// floor. The drop table and the pity adjustment are the chest's (roll.mjs: dropTable, atCounter).
import { atCounter, openingSlots, pickRarity } from './roll.mjs';

export const BANNER_USAGE = `  --banner            a banner pull's opening: GET /api/v1/banners/{id}/odds (saved), whose
                      attributes.featured, guarantee and ten_pull_floor are the disclosed banner, and
                      whose rules and rule_inputs are the chest's (--odds, if given, takes their
                      place). The opening is recomputed with the featured roll (docs/fairness.md,
                      "Banner pulls"): the guarantee flag before it is meta.banner.guaranteed_before
                      of --expect unless --guaranteed-before says; a tenth opening whose last item
                      the ten-pull floor re-rolled says meta.banner.floor_rerolled (or
                      --floor-rerolled true). It prints banner: {featured, guaranteed_before,
                      guaranteed_after, floor_rerolled}; with --expect, matches also needs its
                      meta.banner.featured to be the recomputed one.`;

const pickOf = (list, u) => list[Math.min(list.length - 1, Math.floor(u * list.length))];

/** The banner's parameters from its odds document (GET /api/v1/banners/{id}/odds) or from its attributes. */
export function bannerParameters(doc) {
  const a = (doc?.data ?? doc)?.attributes ?? doc;
  const f = a?.featured;
  if (!f || typeof f.rarity !== 'string' || !Array.isArray(f.collectibles) || typeof f.share !== 'number' || typeof a.guarantee !== 'boolean')
    return undefined;
  return { featured: f, guarantee: a.guarantee, ten_pull_floor: a.ten_pull_floor ?? undefined, rules: a.rules, rule_inputs: a.rule_inputs };
}

/** The pool's featured collectibles (in the banner's order) and the other ones of the featured rarity (in draw order). */
function featuredPools(table, banner) {
  const ofRarity = table.pool.get(banner.featured.rarity) ?? [];
  const listed = new Set(banner.featured.collectibles);
  return {
    featured: banner.featured.collectibles.flatMap((id) => ofRarity.filter((c) => c.id === id)),
    offBanner: ofRarity.filter((c) => !listed.has(c.id)),
  };
}

/** One slot: a number for the rarity; for the featured rarity one for featured (u < share, or the guarantee); one for the collectible. */
function drawSlot(table, banner, dist, slot, guaranteed, random) {
  const rarity = pickRarity(dist, random());
  if (rarity !== banner.featured.rarity) {
    const c = pickOf(table.pool.get(rarity), random());
    return { item: { slot, collectible_id: c.id, rarity, featured: false }, guaranteed };
  }
  const pools = featuredPools(table, banner);
  const u = random();
  const featured = pools.featured.length > 0 && (pools.offBanner.length === 0 || (banner.guarantee && guaranteed) || u < banner.featured.share);
  const c = pickOf(featured ? pools.featured : pools.offBanner, random());
  return { item: { slot, collectible_id: c.id, rarity, featured }, guaranteed: banner.guarantee ? !featured : guaranteed };
}

/** One banner opening of a (pity-adjusted) table: item count, bonuses, then every slot in order. */
export function bannerOpening(table, banner, guaranteed, random) {
  const slots = openingSlots(table, random);
  let flag = guaranteed;
  let beforeLast = guaranteed;
  const items = slots.map((dist, slot) => {
    beforeLast = flag;
    const d = drawSlot(table, banner, dist, slot, flag, random);
    flag = d.guaranteed;
    return d.item;
  });
  return { items, guaranteed_after: flag, guaranteed_before_last: beforeLast };
}

/** The floor's distribution: the ordinary one (before pity) over the rarities ranked at or above the floor, renormalised. */
export function floorDistribution(table, floor) {
  const min = table.rank.get(floor) ?? Infinity;
  const eligible = table.base.filter((d) => (table.rank.get(d.rarity) ?? 0) >= min);
  const total = eligible.reduce((s, d) => s + d.probability, 0);
  return eligible.map((d) => ({ rarity: d.rarity, probability: total > 0 ? d.probability / total : 1 / eligible.length }));
}

/** Re-rolls the last item of a ten-pull's tenth opening at the floor, continuing its stream, with the flag as it stood before that slot. */
export function floorReroll(table, banner, opening, random) {
  const slot = opening.items.length - 1;
  const d = drawSlot(table, banner, floorDistribution(table, banner.ten_pull_floor), slot, opening.guaranteed_before_last, random);
  return { items: [...opening.items.slice(0, slot), d.item], guaranteed_after: d.guaranteed };
}

/** The pity counter after an opening made at `counter` (0 when the chest has no pity). */
function counterAfter(table, counter, items) {
  if (!table.pity) return 0;
  return items.some((it) => (table.rank.get(it.rarity) ?? 0) >= table.pity.rank) ? 0 : counter + 1;
}

/**
 * A whole pull of `count` openings (opening i from randomFor(i)) from a standing {guaranteed_featured,
 * pity, spark_points} of a chest's drop table (roll.mjs's dropTable). Answers the openings
 * ({items, pity_before, pity_after, banner: {featured, guaranteed_before, guaranteed_after,
 * spark_points_after, floor_rerolled}}) and the standing after.
 */
export function bannerPull(table, banner, standing, count, randomFor) {
  let flag = standing.guaranteed_featured;
  let counter = table.pity ? standing.pity : 0;
  const rolled = [];
  for (let i = 0; i < count; i++) {
    const random = randomFor(i);
    const o = bannerOpening(atCounter(table, counter), banner, flag, random);
    rolled.push({ ...o, pity_before: counter, guaranteed_before: flag, random });
    flag = o.guaranteed_after;
    counter = counterAfter(table, counter, o.items);
  }
  let rerolled = false;
  const floor = banner.ten_pull_floor;
  if (count === 10 && floor !== undefined && floor !== null && table.rank.has(floor)) {
    const min = table.rank.get(floor);
    const reached = rolled.some((o) => o.items.some((it) => (table.rank.get(it.rarity) ?? 0) >= min));
    const last = rolled[9];
    if (!reached && floorDistribution(table, floor).length > 0 && last.items.length > 0) {
      const r = floorReroll(table, banner, last, last.random);
      last.items = r.items;
      flag = r.guaranteed_after;
      counter = counterAfter(table, last.pity_before, last.items);
      rerolled = true;
    }
  }
  const openings = rolled.map((o, i) => ({
    items: o.items,
    pity_before: o.pity_before,
    pity_after: i + 1 < rolled.length ? rolled[i + 1].pity_before : counter,
    banner: {
      featured: o.items.some((it) => it.featured),
      guaranteed_before: o.guaranteed_before,
      guaranteed_after: i + 1 < rolled.length ? rolled[i + 1].guaranteed_before : flag,
      spark_points_after: standing.spark_points + i + 1,
      floor_rerolled: rerolled && i === 9,
    },
  }));
  return { openings, standing: { guaranteed_featured: flag, pity: counter, spark_points: standing.spark_points + count } };
}

/**
 * One banner opening as verify-opening.mjs checks it: the chest's table at the pity counter, the
 * flag before it, and whether the ten-pull floor re-rolled its last item (then from the table
 * before pity, the stream continued). Answers its items as the opening lists them, and `banner`.
 */
export function recomputeBannerOpening(table, pity, banner, { flag, rerolled }, random) {
  let o = bannerOpening(atCounter(table, pity), banner, flag, random);
  if (rerolled) o = floorReroll(table, banner, o, random);
  return {
    items: o.items.map(({ slot, collectible_id, rarity }) => ({ slot, collectible_id, rarity })),
    banner: { featured: o.items.some((it) => it.featured), guaranteed_before: flag, guaranteed_after: o.guaranteed_after, floor_rerolled: rerolled },
  };
}
