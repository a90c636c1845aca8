import type { ChestTypeContent, CollectionContent } from '../contracts/content.js';

/**
 * A "complete gacha" (docs/design.md §7; Japan since 2012): a collection whose completion is rewarded
 * while some of its collectibles come only from chests that cost a paid currency, so completing it
 * is a prize for a set of paid random items. `chests` are those paid chests.
 */
export interface CompleteGacha {
  collection: string;
  collectibles: string[];
  chests: string[];
}

/**
 * Whether a chest type costs a paid currency: bought only with paid currencies (a price in at
 * least one currency, every one of them paid), or opened with a paid key, or skipped with a paid
 * currency. A chest with no price at all comes only from grants (starter, rewards, the studio's):
 * not paid, unless its key or skip is.
 */
export function costsPaid(ch: ChestTypeContent, paid: ReadonlySet<string>): boolean {
  const prices = Object.keys(ch.price);
  if (prices.length > 0 && prices.every((code) => paid.has(code))) return true;
  if (ch.requires_key && paid.has(ch.requires_key.currency)) return true;
  return ch.unlock?.skip !== undefined && paid.has(ch.unlock.skip.currency);
}

/**
 * Every complete gacha of `content` under its paid currencies: per rewarded collection, the
 * collectibles that only paid chests drop, and those chests. Collectibles no chest drops are not
 * counted (no chest makes them paid). The load refuses these under `forbid_complete_gacha` (or the
 * JP rule pack); without it the simulator still names them, with what to change.
 */
export function completeGachas(
  content: { chests: ChestTypeContent[]; collections: CollectionContent[] },
  paidCurrencies: readonly string[],
): CompleteGacha[] {
  const paid = new Set(paidCurrencies);
  const droppedBy = new Map<string, ChestTypeContent[]>();
  for (const ch of content.chests) {
    const whole = new Set(ch.rules.pools.flatMap((p) => ('collection' in p ? [p.collection] : [])));
    const listed = new Set(ch.rules.pools.flatMap((p) => ('collectibles' in p ? p.collectibles : [])));
    for (const col of content.collections)
      for (const it of col.collectibles) if (whole.has(col.id) || listed.has(it.id)) droppedBy.set(it.id, [...(droppedBy.get(it.id) ?? []), ch]);
  }
  const found: CompleteGacha[] = [];
  for (const col of content.collections) {
    const reward = col.completion_reward;
    if (!reward || (Object.keys(reward.currencies ?? {}).length === 0 && (reward.chests ?? []).length === 0)) continue;
    const paidOnly = col.collectibles
      .map((it) => it.id)
      .filter((id) => (droppedBy.get(id) ?? []).length > 0 && droppedBy.get(id)!.every((ch) => costsPaid(ch, paid)));
    if (!paidOnly.length) continue;
    const chests = [...new Set(paidOnly.flatMap((id) => droppedBy.get(id)!.map((ch) => ch.id)))];
    found.push({ collection: col.id, collectibles: paidOnly, chests });
  }
  return found;
}

/** What to change so that a complete gacha is not one (the load's refusal and the simulator say it). */
export const COMPLETE_GACHA_ADVICE =
  "drop these collectibles from a free chest too (a coin chest, a granted chest), or remove the collection's completion reward, or reward only sets whose items come from free chests";
