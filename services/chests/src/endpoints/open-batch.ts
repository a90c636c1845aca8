import { appOf, callerOf, endpoint, OpenChests, recordSagaOutcome } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { withNoticedConversions, withStoredConversions } from '../duplicates/conversions.js';
import { openBatch } from '../opening/open-batch.js';
import { COLLECTIONS_GRANT_CONSUMER } from './open-chest.js';

/**
 * chests.v1.open_batch: the opening saga for up to 50 chests at once (see openBatch): one
 * transaction, then every grant published at once and the answer sent when collections applied
 * them (read-your-writes), bounded by GRANT_WAIT_MS as for a single opening. Each opening
 * confirmed in time carries the duplicate conversions collections' notice reported.
 */
export function openBatchEndpoint(deps: ChestsDeps) {
  return endpoint(OpenChests, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const result = await openBatch(deps, { appId, playerId, chestIds: req.chestIds, idempotencyKey: req.idempotencyKey, notify: deps.notices.subject }, ctx);
    if (result.replayed) return { openings: await withStoredConversions(deps.bus, deps.log, result.openings, ctx), replayed: true, granted: true };
    // Registered before publishing, so no notice is missed (the ids are known once rolled).
    const ids = result.openings.map((o) => o.openingId);
    const applied = deps.notices.expect(COLLECTIONS_GRANT_CONSUMER, ids);
    for (let i = 0; i < ids.length; i++) recordSagaOutcome('opening', 'opened');
    await deps.relay.publishNow(result.grants).catch((err) => deps.log.warn({ err: String(err), openings: ids.length }, 'batch grants not published yet; the relay will retry'));
    const seen = await applied.done(deps.config.GRANT_WAIT_MS);
    const openings = result.openings.map((o) => (seen.has(o.openingId) ? withNoticedConversions(o, seen.get(o.openingId)) : o));
    return { openings, replayed: false, granted: seen.size === ids.length };
  });
}
