import { createHash } from 'node:crypto';
import type { AppContent } from '@ccs/shared';
import type { OddsLogEntry } from '../repositories/odds-log-repo.js';

/** The chain's start: the previous hash of an app's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** JSON with every object's keys sorted (recursively): one text per value, whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the canonical JSON of a chest type's rules (the odds document's `attributes.rules`). */
export const rulesSha256 = (rules: unknown): string => sha256(canonicalJson(rules));

/** An entry's hash: SHA-256 of previous_hash + rules_sha256 + chest_type_id + rules_version + effective_at. */
export const entryHashOf = (e: Pick<OddsLogEntry, 'previousHash' | 'rulesSha256' | 'chestTypeId' | 'rulesVersion' | 'effectiveAt'>): string =>
  sha256(`${e.previousHash}${e.rulesSha256}${e.chestTypeId}${e.rulesVersion}${e.effectiveAt}`);

/**
 * The entries a content version appends (DESIGN.md §7): one per chest type whose rules differ from
 * the ones last logged for it (all of them on the app's first logged version), in the content's
 * order, each chained to the one before. `effectiveAt` gives when each chest type's new rules
 * take effect: when the version is applied, or at the end of an odds change notice period.
 */
export function oddsLogEntries(
  content: AppContent,
  version: number,
  head: { last?: OddsLogEntry; rulesOf: Map<string, string> },
  chestTypeIdOf: (slug: string) => string,
  effectiveAt: (chestTypeId: string) => Date,
): OddsLogEntry[] {
  const out: OddsLogEntry[] = [];
  let previous = head.last;
  for (const ch of content.chests) {
    const chestTypeId = chestTypeIdOf(ch.id);
    const hash = rulesSha256(ch.rules);
    if (head.rulesOf.get(chestTypeId) === hash) continue;
    const at = effectiveAt(chestTypeId).toISOString();
    const base = { chestTypeId, rulesVersion: version, rulesSha256: hash, effectiveAt: at, previousHash: previous?.entryHash ?? GENESIS_HASH };
    const entry: OddsLogEntry = { seq: (previous?.seq ?? 0) + 1, ...base, entryHash: entryHashOf(base) };
    out.push(entry);
    previous = entry;
  }
  return out;
}
