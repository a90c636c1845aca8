import { SpendLimitsDocument } from '../../resources/spend-limits.js';
import type { OperationDoc } from '../route-doc.js';
import { NO_STORE_HEADER } from './common.js';

/** GET /api/v1/players/me/limits. */
export const getSpendLimits: OperationDoc = {
  operationId: 'getSpendLimits',
  tag: 'Players',
  summary: "The calling player's spend limits",
  description:
    "Each spend limit of the app's compliance rules (`compliance.spend_limits`) that holds the calling player: at most one a period, the strictest, with what was spent in paid currencies on paid random items (purchases, paid keys, paid timer skips) in the current UTC day or month, what remains and when it resets. " +
    "Limits in money (`money`) follow: what the player paid in verified store transactions (refunded ones left out) in the current UTC day or month, converted into the limit's money by `compliance.money_rates`, and a cap per store payment. A client checks them before it starts a store purchase: a payment past one is refused after the store took it (403 `spend_limit_reached` on POST /api/v1/players/me/store/purchases, nothing granted). " +
    'A player whose birth year or country is not declared is held to every limit that could apply. Past a limit, paying is refused with 403 `spend_limit_reached` and `meta.limit`. An empty list when no limit applies.',
  token: 'required',
  responses: [{ status: 200, description: 'The limits and their standing.', schema: SpendLimitsDocument, headers: NO_STORE_HEADER }],
};
