import { appOf, callerOf, DURABLE, endpoint, OpenChests, publishAndAwait, recordSagaOutcome } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { withNoticedConversions, withStoredConversions } from '../duplicates/conversions.js';
import { openChests } from '../opening/open-chests.js';
import { openingKeyOf } from '../opening/replay.js';

/**
 * chests.v1.open_batch: the opening saga for up to 50 chests at once (see openChests): one
 * statement, then every grant published at once and the answer sent when collections applied
 * them (read-your-writes), bounded by GRANT_WAIT_MS as for a single opening. Each opening
 * confirmed in time carries the duplicate conversions collections' notice reported.
 */
export function openBatchEndpoint(deps: ChestsDeps) {
  return endpoint(OpenChests, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const result = await openChests(
      deps,
      { appId, playerId, chestIds: req.chestIds, kind: 'batch', idempotencyKey: openingKeyOf(req), notify: deps.notices.subject },
      ctx,
    );
    if (result.replayed) return { openings: await withStoredConversions(deps.bus, deps.log, result.openings, ctx), replayed: true, granted: true };
    for (let i = 0; i < result.openings.length; i++) recordSagaOutcome('opening', 'opened');
    const seen = await publishAndAwait(deps, result.grants, { durable: DURABLE.collectionsOpenings, timeoutMs: deps.config.GRANT_WAIT_MS });
    const openings = result.openings.map((o) => (seen.has(o.openingId) ? withNoticedConversions(o, seen.get(o.openingId)) : o));
    return { openings, replayed: false, granted: seen.size === result.openings.length };
  });
}
