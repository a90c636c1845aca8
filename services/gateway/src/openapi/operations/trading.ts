import { z } from 'zod';
import { DissolveDocument } from '../../resources/trading.js';
import type { OperationDoc, ParamDoc } from '../route-doc.js';
import { idempotencyKeyHeader, INVALID_IDEMPOTENCY_KEY, NO_STORE_HEADER, REPLAYED_HEADER } from './common.js';

/** Documentation of trading and dissolving (docs/content.md, "Trading"). */

const collectibleParam: ParamDoc = {
  schema: z.string().min(1).max(200),
  description: 'A collectible of the app (its id, as in `GET /api/v1/collectibles`), of which the caller holds copies.',
  example: 'ancient-clay-amulet',
};

/** POST /api/v1/players/me/collection/{collectible_id}/dissolve. */
export const dissolveCollectible: OperationDoc = {
  operationId: 'dissolveCollectible',
  tag: 'Trades',
  summary: 'Dissolve copies into trade tokens',
  description:
    "Takes `quantity` copies of the collectible out of the caller's collection and credits the rarity's `trading.dissolve` tokens per copy in the app's token currency (ledger reason `trade_dissolve`). " +
    'At least `trading.dissolve_keeps` copies always stay; copies held in an open trade are not in the collection and cannot be dissolved. ' +
    "The answer waits briefly for the wallet to apply the credit (`meta.credited`); the credit is durable and lands in any case. A collection's completion, and its reward, stay when its last copy is dissolved.",
  token: 'required',
  params: { collectible_id: collectibleParam },
  headers: idempotencyKeyHeader('the first dissolve, and nothing is dissolved twice'),
  bodyExample: { data: { type: 'dissolve', attributes: { quantity: 2 } } },
  responses: [{ status: 201, description: 'Dissolved.', schema: DissolveDocument, headers: { ...NO_STORE_HEADER, ...REPLAYED_HEADER } }],
  errors: {
    400: [INVALID_IDEMPOTENCY_KEY],
    403: ["the app's content does not enable trading (`trading_disabled`)"],
    404: ['no such collectible in the app (`collectible_not_found`)'],
    409: [
      'the caller holds no copy of it (`not_owned`)',
      'fewer than `dissolve_keeps` copies would stay; `meta.copies`, `meta.dissolve_keeps` and `meta.max_quantity` say how many can go (`would_dissolve_kept_copies`)',
      'the Idempotency-Key was used for another dissolve (`idempotency_key_reused`)',
    ],
    422: ['`quantity` is not a whole number from 1 to 1,000,000', "the collectible's rarity cannot be dissolved (`not_dissolvable`)"],
  },
};
