import { appOf, callerOf, DissolveCollectible, endpoint } from '@ccs/shared';
import type { TradingDeps } from '../deps.js';
import { dissolve } from '../trading/dissolve.js';

/** collections.v1.dissolve: the calling player's copies into trade tokens (trading/dissolve.ts). */
export function dissolveEndpoint(d: TradingDeps) {
  return endpoint(DissolveCollectible, (req, ctx) => dissolve(d, appOf(ctx), callerOf(ctx), req, ctx));
}
