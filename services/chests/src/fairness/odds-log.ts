import { createHash } from 'node:crypto';
import type { OddsLogEntry } from '../repositories/odds-log-repo.js';

/** The chain's start: the previous hash of an app's first entry. */
const GENESIS_HASH = '0'.repeat(64);

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** JSON with every object's keys sorted (recursively): one text per value, whatever the key order. */
function canonicalJson(value: unknown): string {
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

/**
 * SHA-256 of the canonical JSON of rules: a chest type's (the odds document's `attributes.rules`)
 * or a banner's (the banner odds document's `attributes.banner_rules`).
 */
export const rulesSha256 = (rules: unknown): string => sha256(canonicalJson(rules));

/** What an entry logs: a chest type's rules or a banner's. */
export type LoggedSubject = { chestTypeId: string } | { bannerId: string };

/** A subject's key among the last logged hashes: a chest type's id, or `banner:<slug>` (which no UUID is). */
export const subjectKey = (s: LoggedSubject): string => ('bannerId' in s ? `banner:${s.bannerId}` : s.chestTypeId);

/**
 * What an entry's hash takes for its subject: a chest type's id (a UUID: hex digits and hyphens),
 * or `banner:<banner id>:` for a banner. The `n` of `banner` can never stand where a UUID's
 * characters do, so no banner entry hashes the same text as a chest entry; the closing `:` (a slug
 * has none) keeps the slug apart from the rules version after it.
 */
const hashedSubject = (e: { chestTypeId?: string; bannerId?: string }): string =>
  e.bannerId !== undefined ? `banner:${e.bannerId}:` : e.chestTypeId!;

/**
 * An entry's hash: SHA-256 of previous_hash + rules_sha256 + (chest_type_id, or `banner:` +
 * banner_id + `:`) + rules_version + effective_at.
 */
const entryHashOf = (e: Pick<OddsLogEntry, 'previousHash' | 'rulesSha256' | 'chestTypeId' | 'bannerId' | 'rulesVersion' | 'effectiveAt'>): string =>
  sha256(`${e.previousHash}${e.rulesSha256}${hashedSubject(e)}${e.rulesVersion}${e.effectiveAt}`);

/** One subject's rules in a content version: their hash and when they take effect. */
export interface VersionRules {
  subject: LoggedSubject;
  rulesSha256: string;
  /** When the version applied, or the end of an odds change notice period. */
  effectiveAt: Date;
}

/**
 * The entries a content version appends (docs/design.md §7): one per chest type or banner whose rules
 * differ from the ones last logged for it (all of them the first time), in the order given (the
 * content's chest types, then its banners), each chained to the one before.
 */
export function oddsLogEntries(rules: VersionRules[], version: number, head: { last?: OddsLogEntry; rulesOf: Map<string, string> }): OddsLogEntry[] {
  const out: OddsLogEntry[] = [];
  let previous = head.last;
  for (const r of rules) {
    if (head.rulesOf.get(subjectKey(r.subject)) === r.rulesSha256) continue;
    const base = {
      ...r.subject,
      rulesVersion: version,
      rulesSha256: r.rulesSha256,
      effectiveAt: r.effectiveAt.toISOString(),
      previousHash: previous?.entryHash ?? GENESIS_HASH,
    };
    const entry: OddsLogEntry = { seq: (previous?.seq ?? 0) + 1, ...base, entryHash: entryHashOf(base) };
    out.push(entry);
    previous = entry;
  }
  return out;
}
