// The chest opening's algorithm (docs/fairness.md, "The algorithm"), restated with nothing but
// Node's own crypto so that an auditor needs none of the service's code: the random stream, the
// drop table read from the disclosed rules, pity's adjustment and the roll. verify-opening.mjs
// re-exports it.
import { createHmac } from 'node:crypto';

/** The random stream: HMAC-SHA256(seed bytes, `client:nonce:block`), five 48-bit numbers per block. */
export function fairRandom(serverSeedHex, clientSeed, nonce) {
  const key = Buffer.from(serverSeedHex, 'hex');
  let block = Buffer.alloc(0);
  let k = 0;
  let i = 5;
  return () => {
    if (i >= 5) {
      block = createHmac('sha256', key).update(`${clientSeed}:${nonce}:${k++}`).digest();
      i = 0;
    }
    return block.readUIntBE(6 * i++, 6) / 2 ** 48;
  };
}

/** Normalised weights over the given rarities; all-zero weights are equally likely. */
function distribution(rarities, weight) {
  const total = rarities.reduce((s, r) => s + weight(r), 0);
  return rarities.map((r) => ({ rarity: r.id, probability: total > 0 ? weight(r) / total : 1 / rarities.length }));
}

/** The drop table of a chest's rules read against its rule inputs (rarities, pool collectibles in content order). */
export function dropTable(rules, inputs) {
  const byId = new Map(inputs.collectibles.map((c) => [c.id, c]));
  const chosen = new Map();
  for (const p of rules.pools) {
    if (p.collection !== undefined) for (const c of inputs.collectibles) if (c.collection_id === p.collection) chosen.set(c.id, c);
    if (p.collectibles !== undefined) for (const id of p.collectibles) if (byId.has(id)) chosen.set(id, byId.get(id));
  }
  const pool = new Map();
  for (const c of chosen.values()) pool.set(c.rarity, [...(pool.get(c.rarity) ?? []), c]);
  const present = inputs.rarities.filter((r) => pool.has(r.id));
  const weight = (r) => rules.rarity_weights?.[r.id] ?? r.drop_rate;
  const base = distribution(present, weight);
  const rank = new Map(inputs.rarities.map((r) => [r.id, r.rank]));
  const atLeast = (min) => {
    const eligible = present.filter((r) => r.rank >= (rank.get(min) ?? Infinity));
    return eligible.length ? distribution(eligible, weight) : base;
  };
  const items = rules.items;
  return {
    itemsMin: items.fixed ?? items.min,
    itemsMax: items.fixed ?? items.max,
    guarantees: (rules.guarantees ?? []).map((g) => ({ count: g.count, distribution: atLeast(g.min_rarity) })),
    base,
    bonuses: (rules.bonus ?? []).map((b) => ({ chance: b.chance, count: b.count, distribution: atLeast(b.min_rarity) })),
    pool,
    rank,
    // A pity rule the pool cannot honour is left out (content validation refuses such a rule).
    pity:
      rules.pity && present.some((r) => r.rank >= (rank.get(rules.pity.rarity) ?? Infinity))
        ? { ...rules.pity, rank: rank.get(rules.pity.rarity), guaranteed: atLeast(rules.pity.rarity) }
        : undefined,
  };
}

/** The table as pity shapes it at `counter`: the guaranteed first slot, or the raised share of soft pity. */
export function atCounter(table, counter) {
  const pity = table.pity;
  if (!pity) return table;
  if (counter >= pity.hard - 1) return { ...table, guarantees: [{ count: 1, distribution: pity.guaranteed }, ...table.guarantees] };
  if (pity.soft_start === undefined || counter < pity.soft_start) return table;
  const boost = pity.soft_step * (counter - pity.soft_start + 1);
  const raise = (dist) => {
    const own = dist.find((d) => d.rarity === pity.rarity);
    if (!own || own.probability >= 1) return dist;
    const raised = Math.min(1, own.probability + boost);
    const scale = (1 - raised) / (1 - own.probability);
    return dist.map((d) => ({ rarity: d.rarity, probability: d.rarity === pity.rarity ? raised : d.probability * scale }));
  };
  return {
    ...table,
    base: raise(table.base),
    guarantees: table.guarantees.map((g) => ({ ...g, distribution: raise(g.distribution) })),
    bonuses: table.bonuses.map((b) => ({ ...b, distribution: raise(b.distribution) })),
  };
}

/** The rarity whose cumulative probability interval holds u (rounding's remainder to the last possible one). */
export function pickRarity(dist, u) {
  let acc = 0;
  let rarity = dist[0].rarity;
  for (const d of dist) {
    if (d.probability <= 0) continue;
    acc += d.probability;
    rarity = d.rarity;
    if (u < acc) break;
  }
  return rarity;
}

/** An opening's slots: the item count, the guarantees' slots, ordinary slots, then each bonus with its chance. */
export function openingSlots(table, random) {
  const n = table.itemsMin + Math.floor(random() * (table.itemsMax - table.itemsMin + 1));
  const slots = [];
  for (const g of table.guarantees) for (let i = 0; i < g.count && slots.length < n; i++) slots.push(g.distribution);
  while (slots.length < n) slots.push(table.base);
  for (const b of table.bonuses) if (random() < b.chance) for (let i = 0; i < b.count; i++) slots.push(b.distribution);
  return slots;
}

/** One opening: its slots (openingSlots), then rarity and collectible per slot. */
export function roll(table, random) {
  return openingSlots(table, random).map((dist, slot) => {
    const rarity = pickRarity(dist, random());
    const candidates = table.pool.get(rarity);
    const c = candidates[Math.min(candidates.length - 1, Math.floor(random() * candidates.length))];
    return { slot, collectible_id: c.id, rarity };
  });
}
