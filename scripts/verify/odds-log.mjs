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
 * Verifies an odds log's chain (and, given `rulesOf`, each entry's rules hash): returns one line
 * per broken entry and the counts. `rulesOf(chestTypeId, rulesVersion)` answers the rules an odds
 * document published, or undefined when none was saved.
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
    const expected = sha256hex(`${e.previous_hash}${e.rules_sha256}${e.chest_type_id}${e.rules_version}${e.effective_at}`);
    if (e.entry_hash !== expected) problems.push('entry_hash is not SHA-256 of its fields');
    const rules = rulesOf?.(e.chest_type_id, e.rules_version);
    if (rules !== undefined) {
      rulesChecked++;
      if (sha256hex(canonicalJson(rules)) !== e.rules_sha256) problems.push('rules_sha256 is not SHA-256 of the published rules');
    }
    if (problems.length) broken.push({ seq: e.seq, problems });
    previous = e.entry_hash;
  }
  return { entries: entries.length, verified: entries.length - broken.length, broken, ...(rulesOf ? { rules_checked: rulesChecked } : {}) };
}

/**
 * `--odds-log <file> [--odds-dir <dir>]`: verifies a saved odds log (and each rules hash against
 * the saved odds documents named <chest_type_id>.<rules_version>.json); answers the exit status.
 */
export function oddsLogCommand(log, dir, out, err) {
  const rulesOf =
    dir === undefined
      ? undefined
      : (id, version) => {
          let text;
          try {
            text = readFileSync(`${dir}/${id}.${version}.json`, 'utf8');
          } catch {
            return undefined;
          }
          return JSON.parse(text)?.data?.attributes?.rules;
        };
  const r = verifyOddsLog(log, rulesOf);
  out.write(`${JSON.stringify(r)}\n`);
  if (r.broken.length) err.write(`verify-opening: the odds log's chain is broken at entry ${r.broken[0].seq}: ${r.broken[0].problems.join('; ')}\n`);
  return r.broken.length ? 1 : 0;
}
