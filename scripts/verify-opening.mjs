#!/usr/bin/env node
// Recomputes chest openings from their revealed inputs, with nothing but Node's own modules, so
// that anyone can check the service did not cheat (docs/fairness.md states the algorithm).
//
//   node scripts/verify-opening.mjs --odds odds.json --server-seed <hex> --client-seed <s> --nonce <n> \
//     [--pity-before <k>] [--expect opening.json]
//   node scripts/verify-opening.mjs --batch cases.json
//
// --odds: the document of GET /api/v1/chests/{chest_type_id}/odds?rules_version=<the opening's>
//   (its attributes.rules and attributes.rule_inputs). --pity-before: the opening's
//   pity.opens_since_before. --expect: the opening (an item of GET /api/v1/players/me/openings,
//   or the opening result); the script then says whether the items match, and exits 1 if not.
// --batch: a JSON array of {odds, server_seed, client_seed, nonce, opens_since_before?, expect?};
//   prints one JSON line per case and a summary, and exits 1 if any does not match.
// It also checks that SHA-256(server seed) is the published server_seed_hash when one is given.
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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

/** One opening: item count, guarantee slots, ordinary slots, bonuses; then rarity and collectible per slot. */
export function roll(table, random) {
  const n = table.itemsMin + Math.floor(random() * (table.itemsMax - table.itemsMin + 1));
  const slots = [];
  for (const g of table.guarantees) for (let i = 0; i < g.count && slots.length < n; i++) slots.push(g.distribution);
  while (slots.length < n) slots.push(table.base);
  for (const b of table.bonuses) if (random() < b.chance) for (let i = 0; i < b.count; i++) slots.push(b.distribution);
  return slots.map((dist, slot) => {
    const u = random();
    let acc = 0;
    let rarity = dist[0].rarity;
    for (const d of dist) {
      if (d.probability <= 0) continue;
      acc += d.probability;
      rarity = d.rarity;
      if (u < acc) break;
    }
    const candidates = table.pool.get(rarity);
    const c = candidates[Math.min(candidates.length - 1, Math.floor(random() * candidates.length))];
    return { slot, collectible_id: c.id, rarity };
  });
}

/** Recomputes one opening; `expect` (an opening document) is compared when given. */
export function verify({ odds, server_seed, server_seed_hash, client_seed, nonce, opens_since_before, expect }) {
  const a = (odds.data ?? odds).attributes ?? odds;
  const items = roll(atCounter(dropTable(a.rules, a.rule_inputs), opens_since_before ?? 0), fairRandom(server_seed, client_seed, nonce));
  const commitment = createHash('sha256').update(Buffer.from(server_seed, 'hex')).digest('hex');
  const result = { items, commitment, commitment_ok: server_seed_hash === undefined || server_seed_hash === commitment };
  if (expect !== undefined) {
    const e = expect.attributes ?? expect.data ?? expect;
    const given = e.collectibles.map((c, slot) => ({ slot, collectible_id: c.id, rarity: c.attributes.rarity }));
    result.matches = result.commitment_ok && JSON.stringify(given) === JSON.stringify(items);
  }
  return result;
}

function main(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || argv[i + 1] === undefined) throw new Error(`unexpected argument ${argv[i]}; see the header of this script`);
    args[argv[i].slice(2)] = argv[i + 1];
  }
  const json = (path) => JSON.parse(readFileSync(path, 'utf8'));
  if (args.batch) {
    const cases = json(args.batch);
    let failed = 0;
    for (const [i, c] of cases.entries()) {
      const r = verify(c);
      if (r.matches === false || !r.commitment_ok) failed++;
      process.stdout.write(`${JSON.stringify({ case: i, matches: r.matches ?? null, commitment_ok: r.commitment_ok, items: r.items })}\n`);
    }
    process.stdout.write(`${JSON.stringify({ cases: cases.length, failed })}\n`);
    return failed ? 1 : 0;
  }
  for (const need of ['odds', 'server-seed', 'client-seed', 'nonce'])
    if (args[need] === undefined) throw new Error(`--${need} is required; see the header of this script`);
  const r = verify({
    odds: json(args.odds),
    server_seed: args['server-seed'],
    client_seed: args['client-seed'],
    nonce: Number(args.nonce),
    opens_since_before: args['pity-before'] === undefined ? 0 : Number(args['pity-before']),
    expect: args.expect === undefined ? undefined : json(args.expect),
  });
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  return r.matches === false ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`verify-opening: ${err.message}\n`);
    process.exitCode = 2;
  }
}
