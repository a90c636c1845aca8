import type { ConvertedSlot, DuplicatesRules } from '@ccs/shared';

/** One granted item to judge, in the order the player received them. */
export interface ItemToJudge {
  /** Who holds what: app, player and collectible (`app:player:collectible`). */
  key: string;
  rarity: string;
  /** The duplicate rules of the content version its opening was made with (null: keep every copy). */
  rules: DuplicatesRules | null;
}

/** What became of an item instead of a copy: the currency and amount (0: converted into nothing). */
export type Conversion = Omit<ConvertedSlot, 'slot'>;

/**
 * Decides, item by item, which granted items are kept as copies and which are converted: an item
 * whose collectible the player already holds `max_copies` of (counting the copies stored in
 * `held` and those kept earlier in `items`) is converted into `by_rarity[rarity]` of the rules'
 * currency (0 when its rarity is not listed). Judged one after another, so each item sees what
 * the earlier ones kept, whatever rules they had. `held` must be read under the keys' locks; it
 * is not changed. Returns, per item, its conversion or null when it is kept.
 */
export function judge(items: ItemToJudge[], held: ReadonlyMap<string, number>): (Conversion | null)[] {
  const copies = new Map(held);
  return items.map((it) => {
    const now = copies.get(it.key) ?? 0;
    if (it.rules && now >= it.rules.max_copies) {
      return { currency: it.rules.convert.currency, amount: it.rules.convert.by_rarity[it.rarity] ?? 0 };
    }
    copies.set(it.key, now + 1);
    return null;
  });
}

/** The key `judge` counts copies under (ids of apps and players in lower case, as Postgres prints them). */
export const holdingKey = (appId: string, playerId: string, collectibleId: string): string =>
  `${appId.toLowerCase()}:${playerId.toLowerCase()}:${collectibleId}`;
