import type { OpeningView } from '@ccs/shared';

type OpenedItem = OpeningView['items'][number];

/**
 * An opened collectible's resource meta when it was converted as a duplicate (docs/content.md,
 * "Duplicates"): `{meta: {converted: {currency, amount}}}`, else nothing (kept as a copy, or not
 * known yet).
 */
export const convertedMetaOf = (it: OpenedItem) =>
  it.converted ? { meta: { converted: { currency: it.converted.currency, amount: it.converted.amount } } } : {};

/**
 * An opening's duplicate conversions as totals per currency code (`{"coins": 40}`, `{}` when
 * nothing was converted), or undefined when they are not known: collections had not confirmed the
 * grant when the answer went out, or did not answer.
 */
export const conversionsOf = (o: OpeningView): Record<string, number> | undefined =>
  o.conversions ? Object.fromEntries(o.conversions.map((c) => [c.currency, c.amount])) : undefined;
