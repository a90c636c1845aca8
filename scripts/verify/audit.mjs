// The auditor's export's offline check (docs/design.md §7; `npm run admin -- export-audit` writes the
// directory), with nothing but Node's own modules; used by verify-opening.mjs --audit, which hands
// it its own recomputation (verify) so that there is one.
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { canonicalJson, oddsLogEntries, verifyOddsLog } from './odds-log.mjs';

export const AUDIT_USAGE = `  --audit             a directory written by npm run admin -- export-audit: checks that every file
                      the manifest lists has its SHA-256 (else refuses: exit 1), re-rolls every
                      opening of openings.jsonl whose seed is revealed with the rules of rules.jsonl
                      (items, and SHA-256 of the seed = the committed server_seed_hash), checks that
                      a banner pull's opening rolled the banner rules that the odds log's entry of
                      its banner and rules version hashes, in force by the opening's time, verifies
                      the odds log's chain (chest and banner entries; each entry's rules_sha256
                      against rules.jsonl); prints the
                      counts verified, unverifiable (seed not revealed), mismatched and the chain's
                      result; reads store-transactions.jsonl (App Store and Google Play transactions
                      with their refunds: checked for its hash, its count, each transaction once and
                      each state agreeing with its refunds; not openings, nothing to re-roll);
                      exit 1 on any mismatch, a broken chain, a store transaction that does not
                      hold or a file that is not the manifest's`;

const sha256hex = (text) => createHash('sha256').update(text).digest('hex');

/** An export that cannot be read as one: exit status 2. */
export class AuditUnusable extends Error {}

const FILES = ['openings.jsonl', 'rules.jsonl', 'odds-log.json'];
const STORE_FILE = 'store-transactions.jsonl';
/** The files an export must list: its first format had no store transactions. */
const requiredFiles = (manifest) => (manifest.format === 'ccs-audit-export/1' ? FILES : [...FILES, STORE_FILE]);

function readJsonIn(dir, name) {
  try {
    return JSON.parse(readFileSync(join(dir, name), 'utf8'));
  } catch (e) {
    throw new AuditUnusable(`${join(dir, name)}: ${e.code ?? 'not JSON'} (is ${dir} a directory export-audit wrote?)`);
  }
}

/** The manifest's files whose SHA-256 (or presence) differs: one line each. */
function manifestProblems(dir, manifest) {
  const problems = [];
  for (const name of requiredFiles(manifest)) if (!manifest.files?.[name]) problems.push(`${name} is not in the manifest`);
  for (const [name, f] of Object.entries(manifest.files ?? {})) {
    let bytes;
    try {
      bytes = readFileSync(join(dir, name));
    } catch (e) {
      problems.push(`${name}: ${e.code}`);
      continue;
    }
    if (createHash('sha256').update(bytes).digest('hex') !== f.sha256)
      problems.push(`${name}: SHA-256 is not the manifest's (the file changed after the export)`);
  }
  return problems;
}

/** A rules.jsonl line's key: `chest:<chest type id>:<rules version>` or `banner:<banner id>:<rules version>`. */
const rulesKey = (kind, id, version) => `${kind}:${id}:${version}`;

/** rules.jsonl as a map rulesKey → its line ({rules, rule_inputs} of a chest type, {rules} of a banner). */
function rulesByVersion(dir) {
  const lines = readFileSync(join(dir, 'rules.jsonl'), 'utf8').split('\n').filter(Boolean);
  return new Map(
    lines
      .map((l) => JSON.parse(l))
      .map((r) => [
        r.banner_id !== undefined ? rulesKey('banner', r.banner_id, r.rules_version) : rulesKey('chest', r.chest_type_id, r.rules_version),
        r,
      ]),
  );
}

/** The odds log's banner entries: `<banner id>:<rules version>` → the entry. */
const bannerEntries = (log) => new Map(oddsLogEntries(log).flatMap((e) => (e.banner_id ? [[`${e.banner_id}:${e.rules_version}`, e]] : [])));

/**
 * A banner opening's rules against the odds log: the log's entry of its banner at the rules version
 * it recorded must hash them (SHA-256 of their canonical JSON) and have taken effect by the time
 * of the opening. Undefined when both hold, or for an opening recorded without a banner rules
 * version; else why not.
 */
function bannerRulesProblem(o, logged) {
  const version = o.banner.rules_version;
  if (version === null || version === undefined) return undefined;
  const entry = logged.get(`${o.banner.id}:${version}`);
  if (entry === undefined) return `the odds log has no entry of banner ${o.banner.id} at rules version ${version}`;
  if (!o.banner.rules || sha256hex(canonicalJson(o.banner.rules)) !== entry.rules_sha256)
    return `the banner rules it rolled are not those the odds log entry of banner ${o.banner.id} version ${version} hashes`;
  if (!(Date.parse(entry.effective_at) <= Date.parse(o.opened_at)))
    return `banner ${o.banner.id}'s rules version ${version} took effect at ${entry.effective_at}, after the opening (${o.opened_at})`;
  return undefined;
}

/** One opening line's outcome: 'verified', 'unrevealed', 'unfair' (no fairness inputs) or a mismatch's reason. */
function checkOpening(o, rules, logged, verify) {
  // Whatever its seed, a banner opening's rules must be the logged ones.
  const bannerProblem = o.banner ? bannerRulesProblem(o, logged) : undefined;
  if (bannerProblem) return bannerProblem;
  if (o.server_seed_hash === null) return 'unfair';
  if (o.server_seed === null) return 'unrevealed';
  const r = rules.get(rulesKey('chest', o.chest_type_id, o.rules_version));
  if (!r) return `no rules of chest type ${o.chest_type_id} version ${o.rules_version} in rules.jsonl`;
  try {
    const result = verify({
      odds: { attributes: { rules: r.rules, rule_inputs: r.rule_inputs } },
      server_seed: o.server_seed,
      server_seed_hash: o.server_seed_hash,
      client_seed: o.client_seed,
      nonce: o.nonce,
      opens_since_before: o.pity?.opens_since_before ?? 0,
      expect: { collectibles: o.items.map((it) => ({ id: it.collectible_id, attributes: { rarity: it.rarity } })) },
      // A banner pull's opening re-rolls with the banner's featured roll, its flag and the floor's re-roll.
      ...(o.banner
        ? {
            banner: { attributes: o.banner.rules ?? {} },
            guaranteed_before: o.banner.guaranteed_before,
            floor_rerolled: o.banner.floor_rerolled,
          }
        : {}),
    });
    if (o.banner && result.banner?.featured !== o.banner.featured) return 'the re-rolled banner verdict (featured) differs from the exported one';
    if (result.commitment_ok === false) return 'SHA-256 of the server seed is not the committed server_seed_hash';
    return result.matches ? 'verified' : 'the re-rolled items differ from the exported ones';
  } catch (e) {
    return `unusable inputs: ${e.message}`;
  }
}

/** Re-rolls openings.jsonl line by line (never all in memory); answers the counts and the first mismatches. */
async function checkOpenings(dir, rules, logged, verify) {
  const counts = { openings: 0, verified: 0, unrevealed: 0, unfair: 0, mismatched: 0 };
  const mismatches = [];
  const lines = createInterface({ input: createReadStream(join(dir, 'openings.jsonl'), 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line) continue;
    counts.openings++;
    let o;
    try {
      o = JSON.parse(line);
    } catch {
      o = undefined;
    }
    const outcome = o ? checkOpening(o, rules, logged, verify) : 'the line is not JSON';
    if (outcome in counts) counts[outcome]++;
    else {
      counts.mismatched++;
      if (mismatches.length < 20) mismatches.push(`opening ${o?.opening_id ?? `on line ${counts.openings}`}: ${outcome}`);
    }
  }
  return { counts, mismatches };
}

/**
 * What one line of store-transactions.jsonl breaks, or undefined: it must be JSON, name its
 * transaction once in the file (a store transaction grants once), and be `refunded` exactly when
 * its last refund (refunds oldest first) is a refund rather than a reversal.
 */
function storeLineProblem(t, seen) {
  if (!t || typeof t.transaction_id !== 'string' || !Array.isArray(t.refunds)) return 'not a store transaction';
  const key = `${t.platform}:${t.transaction_id}`;
  if (seen.has(key)) return `${t.platform} transaction ${t.transaction_id} appears twice: a store transaction grants once`;
  seen.add(key);
  const expected = t.refunds.at(-1)?.kind === 'refund' ? 'refunded' : 'granted';
  if (t.state !== expected)
    return `${t.platform} transaction ${t.transaction_id} is ${t.state}, but its refunds say ${expected} (last: ${t.refunds.at(-1)?.kind ?? 'none'})`;
  return undefined;
}

/** store-transactions.jsonl line by line: the counts, and what does not hold (the first 20). */
async function checkStoreTransactions(dir) {
  const counts = { transactions: 0, refunded: 0, refunds: 0, reversals: 0 };
  const problems = [];
  const seen = new Set();
  const lines = createInterface({ input: createReadStream(join(dir, STORE_FILE), 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line) continue;
    counts.transactions++;
    let t;
    try {
      t = JSON.parse(line);
    } catch {
      t = undefined;
    }
    const problem = storeLineProblem(t, seen);
    if (problem) {
      if (problems.length < 20) problems.push(`line ${counts.transactions}: ${problem}`);
      continue;
    }
    if (t.state === 'refunded') counts.refunded++;
    for (const r of t.refunds) counts[r.kind === 'reversal' ? 'reversals' : 'refunds']++;
  }
  return { counts, problems };
}

/** Prints the store transactions' line; answers whether they hold (an export of the first format has none: true). */
async function reportStore(dir, manifest, out, err) {
  if (!manifest.files?.[STORE_FILE]) return true;
  const { counts, problems } = await checkStoreTransactions(dir);
  const listed = manifest.counts?.store_transactions;
  out.write(
    `store transactions: ${counts.transactions}${listed === counts.transactions ? '' : ` (the manifest counts ${listed})`}, ${counts.refunded} refunded now; ` +
      `${counts.refunds} refunds, ${counts.reversals} reversals; ${problems.length ? `${problems.length} not as they should be` : 'each once, states agree with refunds'}\n`,
  );
  for (const p of problems) err.write(`verify-opening: store transaction: ${p}\n`);
  return problems.length === 0 && listed === counts.transactions;
}

/**
 * `--audit <dir>`: the manifest's hashes, every revealed opening re-rolled with `verify` (the
 * verifier's own), the odds log's chain, the store transactions; answers the exit status (0 all
 * holds, 1 not).
 */
export async function auditCommand(dir, verify, out, err) {
  const manifest = readJsonIn(dir, 'manifest.json');
  const problems = manifestProblems(dir, manifest);
  if (problems.length) {
    out.write(`manifest: refused: ${problems.length} file(s) not as the manifest says\n`);
    for (const p of problems) err.write(`verify-opening: ${p}\n`);
    return 1;
  }
  out.write(
    `manifest: ${Object.keys(manifest.files).length} files, SHA-256 as listed (app ${manifest.app_id}, ${manifest.period?.from} to ${manifest.period?.to})\n`,
  );
  const rules = rulesByVersion(dir);
  const log = readJsonIn(dir, 'odds-log.json');
  const { counts, mismatches } = await checkOpenings(dir, rules, bannerEntries(log), verify);
  const chain = verifyOddsLog(log, (kind, id, version) => rules.get(rulesKey(kind, id, version))?.rules);
  const listed = manifest.counts?.openings;
  out.write(`openings: ${counts.openings}${listed === counts.openings ? '' : ` (the manifest counts ${listed})`}\n`);
  out.write(`  verified: ${counts.verified}\n  unverifiable (seed not revealed): ${counts.unrevealed}\n`);
  if (counts.unfair) out.write(`  unverifiable (made before verifiable randomness): ${counts.unfair}\n`);
  out.write(`  mismatched: ${counts.mismatched}\n`);
  const broken = chain.broken.length;
  out.write(
    `odds log: ${chain.entries} entries, ${broken ? `chain broken at entry ${chain.broken[0].seq}: ${chain.broken[0].problems.join('; ')}` : 'chain verifies'} (${chain.rules_checked} rules hashes checked)\n`,
  );
  for (const m of mismatches) err.write(`verify-opening: mismatched: ${m}\n`);
  const storeHolds = await reportStore(dir, manifest, out, err);
  return counts.mismatched || broken || listed !== counts.openings || !storeHolds ? 1 : 0;
}
