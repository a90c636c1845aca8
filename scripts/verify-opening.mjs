#!/usr/bin/env node
// Recomputes chest openings from their revealed inputs, with nothing but Node's own modules, so
// that anyone can check the service did not cheat and kept its commitment (docs/fairness.md
// states the algorithm). `node scripts/verify-opening.mjs --help` prints the usage.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AUDIT_USAGE, AuditUnusable, auditCommand } from './verify/audit.mjs';
import { BANNER_USAGE, bannerParameters, recomputeBannerOpening } from './verify/banner.mjs';
import { atCounter, dropTable, fairRandom, roll } from './verify/roll.mjs';

export { atCounter, dropTable, fairRandom, roll } from './verify/roll.mjs';
export { bannerOpening, bannerPull, floorDistribution } from './verify/banner.mjs';
import { oddsLogCommand } from './verify/odds-log.mjs';

const USAGE = `Usage:
  node scripts/verify-opening.mjs --odds odds.json --server-seed <hex> --expect opening.json
      [--server-seed-hash <hex>] [--client-seed <s>] [--nonce <n>] [--pity-before <k>]
      [--banner banner-odds.json [--guaranteed-before true|false] [--floor-rerolled true|false]]
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
${BANNER_USAGE}
  --odds-log          the app's odds log (GET /api/v1/odds-log, every page: a JSON:API document, an
                      array of them, or an array of its entries): checks that the entries run from 1
                      without a gap, that each previous_hash is the entry before's entry_hash (64 zeros
                      first) and that each entry_hash is SHA-256 of previous_hash + rules_sha256 +
                      chest_type_id + rules_version + effective_at (a banner entry, which has
                      banner_id instead: previous_hash + rules_sha256 + "banner:" + banner_id + ":" +
                      rules_version + effective_at); prints {entries, verified, broken}
  --odds-dir          with --odds-log: a directory of saved odds documents named
                      <chest_type_id>.<rules_version>.json (GET /api/v1/chests/{id}/odds?rules_version=)
                      and banner-<banner_id>.<rules_version>.json (GET /api/v1/banners/{id}/odds while
                      that banner_rules_version is in force): each entry's rules_sha256 must be
                      SHA-256 of the canonical JSON (keys sorted) of that document's attributes.rules
                      (a banner's: attributes.banner_rules)
${AUDIT_USAGE}
  --batch             a JSON array of {odds, server_seed, server_seed_hash?, client_seed?, nonce?,
                      opens_since_before?, expect?, banner?, guaranteed_before?, floor_rerolled?}:
                      one JSON line per case, then {cases, failed}
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
  return {
    collectibles: body.collectibles,
    fairness: meta.fairness ?? body.fairness ?? undefined,
    pity: meta.pity ?? body.pity ?? undefined,
    banner: meta.banner ?? body.banner ?? undefined,
  };
}

/**
 * Recomputes one opening. The commitment is `server_seed_hash` and/or the one in `expect`
 * (meta.fairness.server_seed_hash); every one given must be SHA-256 of the seed. With none,
 * commitment_ok is null (the caller says so and exits 2). With a commitment that fails, matches is
 * false whatever the items.
 */
export function verify({
  odds,
  server_seed,
  server_seed_hash,
  client_seed,
  nonce,
  opens_since_before,
  expect,
  banner,
  guaranteed_before,
  floor_rerolled,
}) {
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
  const b = banner === undefined ? undefined : bannerParameters(banner);
  if (banner !== undefined && !b)
    throw new UsageError(
      'the banner document has no attributes.featured {rarity, collectibles, share} and guarantee: give GET /api/v1/banners/{id}/odds',
    );
  const a = odds === undefined && b?.rules ? b : ((odds?.data ?? odds)?.attributes ?? odds);
  if (!a?.rules || !a?.rule_inputs)
    throw new UsageError('the odds document has no attributes.rules and attributes.rule_inputs: fetch it with ?rules_version=');
  const random = fairRandom(server_seed, clientSeed, n);
  const flag = guaranteed_before ?? opening?.banner?.guaranteed_before ?? false;
  const rerolled = floor_rerolled ?? opening?.banner?.floor_rerolled ?? false;
  if (typeof flag !== 'boolean' || typeof rerolled !== 'boolean') throw new UsageError('guaranteed_before and floor_rerolled are true or false');
  if (rerolled && !b?.ten_pull_floor) throw new UsageError('the opening says floor_rerolled, but the banner has no ten_pull_floor');
  const recomputed = b && recomputeBannerOpening(dropTable(a.rules, a.rule_inputs), pity, b, { flag, rerolled }, random);
  const items = recomputed?.items ?? roll(atCounter(dropTable(a.rules, a.rule_inputs), pity), random);
  const bannerResult = recomputed?.banner;
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
    ...(bannerResult ? { banner: bannerResult } : {}),
  };
  if (opening !== undefined) {
    const given = opening.collectibles.map((c, slot) => ({ slot, collectible_id: c.id, rarity: c.attributes?.rarity }));
    const featuredOk = !bannerResult || opening.banner?.featured === undefined || opening.banner.featured === bannerResult.featured;
    result.matches = commitmentOk !== false && featuredOk && JSON.stringify(given) === JSON.stringify(items);
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
  'banner',
  'guaranteed-before',
  'floor-rerolled',
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

function flagOf(name, value) {
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} takes true or false`);
  return value === 'true';
}

const NO_COMMITMENT =
  'no commitment to check: give --server-seed-hash (the server_seed_hash published before the opening) or an opening document (--expect) that carries fairness.server_seed_hash';

/** --batch: one JSON line per case, then {cases, failed[, uncommitted]}; the exit status. */
function batchCommand(cases, out, err) {
  if (!Array.isArray(cases)) throw new UsageError('--batch takes a JSON array of cases');
  let failed = 0;
  let uncommitted = 0;
  for (const [i, c] of cases.entries()) {
    let line;
    try {
      const r = verify(c ?? {});
      if (r.commitment_ok === null) uncommitted++;
      else if (r.matches === false || r.commitment_ok === false) failed++;
      line = { case: i, matches: r.matches ?? null, commitment_ok: r.commitment_ok, items: r.items, ...(r.banner ? { banner: r.banner } : {}) };
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
    return batchCommand(readJson(args.batch), out, err);
  }
  if (args.odds === undefined && args.banner === undefined) throw new UsageError('--odds is required');
  if (args['server-seed'] === undefined) throw new UsageError('--server-seed is required');
  if (args.banner === undefined && (args['guaranteed-before'] !== undefined || args['floor-rerolled'] !== undefined))
    throw new UsageError('--guaranteed-before and --floor-rerolled go with --banner');
  if (args.expect === undefined)
    for (const need of ['client-seed', 'nonce']) if (args[need] === undefined) throw new UsageError(`--${need} is required without --expect`);
  const r = verify({
    odds: args.odds === undefined ? undefined : readJson(args.odds),
    server_seed: args['server-seed'],
    server_seed_hash: args['server-seed-hash'],
    client_seed: args['client-seed'],
    nonce: whole('nonce', args.nonce),
    opens_since_before: whole('pity-before', args['pity-before']),
    expect: args.expect === undefined ? undefined : readJson(args.expect),
    banner: args.banner === undefined ? undefined : readJson(args.banner),
    guaranteed_before: flagOf('guaranteed-before', args['guaranteed-before']),
    floor_rerolled: flagOf('floor-rerolled', args['floor-rerolled']),
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
