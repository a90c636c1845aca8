// The odds log's offline check (docs/fairness.md, "The odds log and observed odds"), with nothing
// but Node's own modules; used by verify-opening.mjs --odds-log.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** JSON with every object's keys sorted, recursively (what rules_sha256 hashes). */
export function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const sha256hex = (text) => createHash('sha256').update(text).digest('hex');

/** The entries of an odds log in any of the shapes --odds-log takes, as attributes with their seq. */
function logEntries(doc) {
  const docs = Array.isArray(doc) && doc.every((d) => d && Array.isArray(d.data)) ? doc : [doc];
  const items = docs.flatMap((d) => (Array.isArray(d) ? d : Array.isArray(d?.data) ? d.data : []));
  return items.map((e) => ({ seq: Number(e.id ?? e.seq), ...(e.attributes ?? e) }));
}

/**
 * What an entry logs and how its hash takes it: a chest entry's chest_type_id as it is, a banner
 * entry's banner_id as `banner:<banner_id>:` (docs/fairness.md, "The odds log"); undefined when the
 * entry names both or neither.
 */
function subjectOf(e) {
  const chest = e.chest_type_id !== undefined && e.chest_type_id !== null;
  const banner = e.banner_id !== undefined && e.banner_id !== null;
  if (chest === banner) return undefined;
  return banner
    ? { kind: 'banner', id: e.banner_id, hashed: `banner:${e.banner_id}:` }
    : { kind: 'chest', id: e.chest_type_id, hashed: e.chest_type_id };
}

/**
 * Verifies an odds log's chain (and, given `rulesOf`, each entry's rules hash): returns one line
 * per broken entry and the counts. `rulesOf(kind, id, rulesVersion)` answers the rules an odds
 * document published ('chest': a chest type's `attributes.rules`; 'banner': a banner's
 * `attributes.banner_rules`), or undefined when none was saved.
 */
export function verifyOddsLog(doc, rulesOf) {
  const entries = logEntries(doc).sort((a, b) => a.seq - b.seq);
  const broken = [];
  let previous = '0'.repeat(64);
  let rulesChecked = 0;
  for (const [i, e] of entries.entries()) {
    const problems = [];
    if (e.seq !== i + 1) problems.push(`sequence ${e.seq} where ${i + 1} was due`);
    if (e.previous_hash !== previous) problems.push("previous_hash is not the entry before's entry_hash");
    const subject = subjectOf(e);
    if (!subject) problems.push('the entry names both a chest_type_id and a banner_id, or neither');
    else if (e.entry_hash !== sha256hex(`${e.previous_hash}${e.rules_sha256}${subject.hashed}${e.rules_version}${e.effective_at}`))
      problems.push('entry_hash is not SHA-256 of its fields');
    const rules = subject && rulesOf?.(subject.kind, subject.id, e.rules_version);
    if (rules !== undefined) {
      rulesChecked++;
      if (sha256hex(canonicalJson(rules)) !== e.rules_sha256) problems.push('rules_sha256 is not SHA-256 of the published rules');
    }
    if (problems.length) broken.push({ seq: e.seq, problems });
    previous = e.entry_hash;
  }
  return { entries: entries.length, verified: entries.length - broken.length, broken, ...(rulesOf ? { rules_checked: rulesChecked } : {}) };
}

/** The entries of an odds log as verifyOddsLog reads them (for the audit's look-ups). */
export const oddsLogEntries = (doc) => logEntries(doc);

/** The saved document's rules: a chest odds document's attributes.rules, a banner odds document's attributes.banner_rules. */
function savedRules(dir, kind, id, version) {
  let text;
  try {
    text = readFileSync(`${dir}/${kind === 'banner' ? `banner-${id}` : id}.${version}.json`, 'utf8');
  } catch {
    return undefined;
  }
  const a = JSON.parse(text)?.data?.attributes;
  return kind === 'banner' ? a?.banner_rules : a?.rules;
}

/**
 * `--odds-log <file> [--odds-dir <dir>]`: verifies a saved odds log (and each rules hash against
 * the saved odds documents: <chest_type_id>.<rules_version>.json for a chest type,
 * banner-<banner_id>.<rules_version>.json for a banner); answers the exit status.
 */
export function oddsLogCommand(log, dir, out, err) {
  const rulesOf = dir === undefined ? undefined : (kind, id, version) => savedRules(dir, kind, id, version);
  const r = verifyOddsLog(log, rulesOf);
  out.write(`${JSON.stringify(r)}\n`);
  if (r.broken.length) err.write(`verify-opening: the odds log's chain is broken at entry ${r.broken[0].seq}: ${r.broken[0].problems.join('; ')}\n`);
  return r.broken.length ? 1 : 0;
}
