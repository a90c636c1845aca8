#!/usr/bin/env node
// Recomputes chest openings from their revealed inputs, with nothing but Node's own modules, so
// that anyone can check the service did not cheat and kept its commitment (docs/fairness.md
// states the algorithm). `node scripts/verify-opening.mjs --help` prints the usage.
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AUDIT_USAGE, AuditUnusable, auditCommand } from './verify/audit.mjs';
import { oddsLogCommand } from './verify/odds-log.mjs';

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

const USAGE = `Usage:
  node scripts/verify-opening.mjs --odds odds.json --server-seed <hex> --expect opening.json
      [--server-seed-hash <hex>] [--client-seed <s>] [--nonce <n>] [--pity-before <k>]
  node scripts/verify-opening.mjs --odds odds.json --server-seed <hex> --server-seed-hash <hex>
      --client-seed <s> --nonce <n> [--pity-before <k>]
  node scripts/verify-opening.mjs --batch cases.json
  node scripts/verify-opening.mjs --odds-log log.json [--odds-dir <dir>]
  node scripts/verify-opening.mjs --audit <dir>
  node scripts/verify-opening.mjs --help

Recomputes a chest opening from the revealed server seed and says whether the service kept its
commitment and rolled what it answered (docs/fairness.md).

  --odds              GET /api/v1/chests/{chest_type_id}/odds?rules_version=<the opening's> (saved):
                      its attributes.rules and attributes.rule_inputs
  --server-seed       the revealed server seed (64 hex digits: meta.revealed.server_seed of the rotation)
  --expect            the opening: its result (GET or POST /api/v1/chests/{id}/open), an item of
                      GET /api/v1/players/me/openings (or of a batch open), or {"data": such an item}.
                      Its fairness.server_seed_hash is the commitment checked; its client seed, nonce
                      and pity.opens_since_before are used unless given below; its items are compared.
  --server-seed-hash  the commitment published before the opening (64 hex digits). When the document
                      has one too, the seed must hash to both.
  --client-seed, --nonce, --pity-before
                      the opening's client seed, nonce and pity counter before it (default 0)
  --odds-log          the app's odds log (GET /api/v1/odds-log, every page: a JSON:API document, an
                      array of them, or an array of its entries): checks that the entries run from 1
                      without a gap, that each previous_hash is the entry before's entry_hash (64 zeros
                      first) and that each entry_hash is SHA-256 of previous_hash + rules_sha256 +
                      chest_type_id + rules_version + effective_at; prints {entries, verified, broken}
  --odds-dir          with --odds-log: a directory of saved odds documents named
                      <chest_type_id>.<rules_version>.json (GET /api/v1/chests/{id}/odds?rules_version=):
                      each entry's rules_sha256 must be SHA-256 of the canonical JSON (keys sorted) of
                      that document's attributes.rules
${AUDIT_USAGE}
  --batch             a JSON array of {odds, server_seed, server_seed_hash?, client_seed?, nonce?,
                      opens_since_before?, expect?}: one JSON line per case, then {cases, failed}
                      (and uncommitted, when some case has no commitment)

It prints the recomputed items, commitment (SHA-256 of the seed), server_seed_hash (the commitment
checked), commitment_ok, and matches (with an opening to compare). A seed whose SHA-256 is not the
commitment gives commitment_ok false and matches false, whatever the items.

Exit status: 0 the commitment holds (and the items match, when compared); 1 the commitment does
not hold or the items differ (--audit: any mismatch, a broken chain, a file not the manifest's);
2 no commitment was given (neither --server-seed-hash nor one in the opening), or the input is
unusable.`;

const HEX64 = /^[0-9a-f]{64}$/i;

/** A usage error: exit status 2. */
class UsageError extends Error {}

/**
 * The parts of an opening document: the opening result ({data: {collectibles}, meta: {fairness,
 * pity}}), a batch-open item ({collectibles, meta}), an openings-list item ({attributes:
 * {collectibles, fairness, pity}}) or such an item wrapped as {data: item}.
 */
export function openingParts(doc) {
  let d = doc;
  if (d && typeof d.data === 'object' && d.data !== null && !Array.isArray(d.data) && d.data.attributes) d = d.data;
  const body = d?.attributes ?? d?.data ?? d;
  const meta = d?.attributes ?? d?.meta ?? {};
  if (!body || !Array.isArray(body.collectibles))
    throw new UsageError('the opening document has no collectibles: give an opening result or an item of /players/me/openings');
  return { collectibles: body.collectibles, fairness: meta.fairness ?? body.fairness ?? undefined, pity: meta.pity ?? body.pity ?? undefined };
}

/**
 * Recomputes one opening. The commitment is `server_seed_hash` and/or the one in `expect`
 * (meta.fairness.server_seed_hash); every one given must be SHA-256 of the seed. With none,
 * commitment_ok is null (the caller says so and exits 2). With a commitment that fails, matches is
 * false whatever the items.
 */
export function verify({ odds, server_seed, server_seed_hash, client_seed, nonce, opens_since_before, expect }) {
  if (typeof server_seed !== 'string' || !HEX64.test(server_seed))
    throw new UsageError('the server seed must be 64 hex digits (the revealed server_seed)');
  const opening = expect === undefined ? undefined : openingParts(expect);
  const committed = [server_seed_hash, opening?.fairness?.server_seed_hash].filter((h) => h !== undefined && h !== null);
  for (const h of committed) if (typeof h !== 'string' || !HEX64.test(h)) throw new UsageError('a server_seed_hash must be 64 hex digits (SHA-256)');
  const clientSeed = client_seed ?? opening?.fairness?.client_seed;
  const n = nonce ?? opening?.fairness?.nonce;
  if (typeof clientSeed !== 'string') throw new UsageError('no client seed: give --client-seed or an opening that has fairness.client_seed');
  if (!Number.isSafeInteger(n) || n < 0) throw new UsageError('no nonce (a whole number from 0): give --nonce or an opening that has fairness.nonce');
  const pity = opens_since_before ?? opening?.pity?.opens_since_before ?? 0;
  if (!Number.isSafeInteger(pity) || pity < 0) throw new UsageError('the pity counter must be a whole number from 0');
  const a = (odds?.data ?? odds)?.attributes ?? odds;
  if (!a?.rules || !a?.rule_inputs)
    throw new UsageError('the odds document has no attributes.rules and attributes.rule_inputs: fetch it with ?rules_version=');
  const items = roll(atCounter(dropTable(a.rules, a.rule_inputs), pity), fairRandom(server_seed, clientSeed, n));
  const commitment = createHash('sha256').update(Buffer.from(server_seed, 'hex')).digest('hex');
  const commitmentOk = committed.length === 0 ? null : committed.every((h) => h.toLowerCase() === commitment);
  const result = {
    items,
    commitment,
    server_seed_hash:
      committed.length === 0
        ? null
        : committed.length === 1 || committed[0].toLowerCase() === committed[1].toLowerCase()
          ? committed[0].toLowerCase()
          : committed.map((h) => h.toLowerCase()),
    commitment_ok: commitmentOk,
  };
  if (opening !== undefined) {
    const given = opening.collectibles.map((c, slot) => ({ slot, collectible_id: c.id, rarity: c.attributes?.rarity }));
    result.matches = commitmentOk !== false && JSON.stringify(given) === JSON.stringify(items);
  } else if (commitmentOk === false) result.matches = false;
  return result;
}

const OPTIONS = [
  'odds',
  'server-seed',
  'server-seed-hash',
  'client-seed',
  'nonce',
  'pity-before',
  'expect',
  'batch',
  'odds-log',
  'odds-dir',
  'audit',
];

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i].startsWith('--') ? argv[i].slice(2) : undefined;
    if (name === undefined || !OPTIONS.includes(name)) throw new UsageError(`unknown argument ${argv[i]}`);
    if (argv[i + 1] === undefined) throw new UsageError(`--${name} needs a value`);
    if (name in args) throw new UsageError(`--${name} is given twice`);
    args[name] = argv[i + 1];
  }
  return args;
}

function readJson(path) {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${err.code ?? err.message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${path} is not JSON`);
  }
}

function whole(name, value) {
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value)) throw new UsageError(`--${name} takes a whole number from 0`);
  return Number(value);
}

const NO_COMMITMENT =
  'no commitment to check: give --server-seed-hash (the server_seed_hash published before the opening) or an opening document (--expect) that carries fairness.server_seed_hash';

/** Runs the command line; answers the exit status (a promise of it with --audit). */
export function main(argv, out = process.stdout, err = process.stderr) {
  if (argv.includes('--help') || argv.includes('-h')) {
    out.write(`${USAGE}\n`);
    return 0;
  }
  const args = parseArgs(argv);
  if (args.audit !== undefined) {
    if (Object.keys(args).length > 1) throw new UsageError('--audit takes no other argument');
    return auditCommand(args.audit, verify, out, err);
  }
  if (args['odds-log'] !== undefined) {
    if (Object.keys(args).some((k) => k !== 'odds-log' && k !== 'odds-dir')) throw new UsageError('--odds-log takes only --odds-dir besides');
    return oddsLogCommand(readJson(args['odds-log']), args['odds-dir'], out, err);
  }
  if (args.batch !== undefined) {
    if (Object.keys(args).length > 1) throw new UsageError('--batch takes no other argument');
    const cases = readJson(args.batch);
    if (!Array.isArray(cases)) throw new UsageError('--batch takes a JSON array of cases');
    let failed = 0;
    let uncommitted = 0;
    for (const [i, c] of cases.entries()) {
      let line;
      try {
        const r = verify(c ?? {});
        if (r.commitment_ok === null) uncommitted++;
        else if (r.matches === false || r.commitment_ok === false) failed++;
        line = { case: i, matches: r.matches ?? null, commitment_ok: r.commitment_ok, items: r.items };
      } catch (e) {
        if (!(e instanceof UsageError)) throw e;
        failed++;
        line = { case: i, matches: false, commitment_ok: null, error: e.message };
      }
      out.write(`${JSON.stringify(line)}\n`);
    }
    out.write(`${JSON.stringify({ cases: cases.length, failed, ...(uncommitted ? { uncommitted } : {}) })}\n`);
    if (uncommitted) err.write(`verify-opening: ${uncommitted} case(s) with ${NO_COMMITMENT}\n`);
    return failed ? 1 : uncommitted ? 2 : 0;
  }
  for (const need of ['odds', 'server-seed']) if (args[need] === undefined) throw new UsageError(`--${need} is required`);
  if (args.expect === undefined)
    for (const need of ['client-seed', 'nonce']) if (args[need] === undefined) throw new UsageError(`--${need} is required without --expect`);
  const r = verify({
    odds: readJson(args.odds),
    server_seed: args['server-seed'],
    server_seed_hash: args['server-seed-hash'],
    client_seed: args['client-seed'],
    nonce: whole('nonce', args.nonce),
    opens_since_before: whole('pity-before', args['pity-before']),
    expect: args.expect === undefined ? undefined : readJson(args.expect),
  });
  out.write(`${JSON.stringify(r, null, 2)}\n`);
  if (r.commitment_ok === null) {
    err.write(`verify-opening: ${NO_COMMITMENT}\n`);
    return 2;
  }
  if (r.commitment_ok === false)
    err.write('verify-opening: SHA-256 of the server seed is not the published commitment: the service did not keep it\n');
  else if (r.matches === false) err.write('verify-opening: the recomputed items differ from the opening\n');
  return r.commitment_ok === false || r.matches === false ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`verify-opening: ${err.message}\n${err instanceof UsageError ? 'See --help.\n' : ''}`);
    process.exitCode = err instanceof UsageError || err instanceof AuditUnusable ? 2 : 1;
  }
}
