import { DuplicatesSchema, type DuplicatesRules, type Queryable } from '@ccs/shared';
import { readRules } from '../repositories/duplicates-repo.js';

/**
 * A grant names a content version whose content has not reached collections yet (its content
 * message is behind the grant): retried by the consumer runtime until it has.
 */
export class ContentNotYetAppliedError extends Error {
  override name = 'ContentNotYetAppliedError';
}

/** Which rules judge a grant: its app, and the content version it was made with (absent: the current one). */
export interface RulesQuestion {
  appId: string;
  rulesVersion?: number;
}

/**
 * The duplicate rules of content versions, kept in memory once read: a version's rules never
 * change, so nothing here ever expires. The app's current version (asked by grants that name no
 * version, written before chests recorded it) is read each time.
 */
export class DuplicateRulesBook {
  private readonly known = new Map<string, DuplicatesRules | null>();

  /**
   * The rules per question (same order). A named version collections has not received, of an app
   * whose current version is older or unknown, throws ContentNotYetAppliedError. A version it
   * should have but has no rules row for was applied before collections kept rules, and a grant
   * naming no version of an app without content here is from before rules existed: every copy
   * is kept.
   */
  async rulesFor(q: Queryable, questions: RulesQuestion[]): Promise<(DuplicatesRules | null)[]> {
    const keyOf = (x: RulesQuestion) => `${x.appId.toLowerCase()}:${x.rulesVersion ?? 'current'}`;
    const missing = new Map<string, { appId: string; version: number | null }>();
    for (const x of questions) {
      const k = keyOf(x);
      if (x.rulesVersion === undefined || !this.known.has(k)) missing.set(k, { appId: x.appId.toLowerCase(), version: x.rulesVersion ?? null });
    }
    const answers = new Map<string, DuplicatesRules | null>();
    if (missing.size) {
      for (const row of await readRules(q, [...missing.values()])) {
        const k = `${row.appId}:${row.asked ?? 'current'}`;
        if (!row.known && row.asked !== null && (row.current === null || row.asked > row.current)) {
          throw new ContentNotYetAppliedError(`content version ${row.asked} of app ${row.appId} has not reached collections yet`);
        }
        const rules = row.known && row.rules ? DuplicatesSchema.parse(row.rules) : null;
        answers.set(k, rules);
        // Only a stored version's own row is final; "current" and missing rows may change.
        if (row.known && row.asked !== null) this.known.set(k, rules);
      }
    }
    return questions.map((x) => {
      const k = keyOf(x);
      return answers.has(k) ? answers.get(k)! : (this.known.get(k) ?? null);
    });
  }
}
