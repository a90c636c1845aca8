import { appOf, callerOf, DURABLE, endpoint, OpenChest, publishAndAwait, recordSagaOutcome } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { withNoticedConversions, withStoredConversions } from '../duplicates/conversions.js';
import { openChests } from '../opening/open-chests.js';
import { openingKeyOf } from '../opening/replay.js';

/**
 * chests.v1.open: the opening saga, a batch of one.
 * 1. Consume the chest, record the opening and its grant in one statement (see openChests).
 * 2. Publish the grant at once, from memory, and wait for the stream's acknowledgement (the outbox
 *    relay publishes it later if this fails).
 * 3. Answer once collections has applied it (read-your-writes: the collection read right after
 *    shows the items), bounded by GRANT_WAIT_MS. If collections is down the opening still
 *    succeeds: the chest is consumed and the grant is durable.
 * The wait is one entry in this process's AppliedNotices, registered before the grant can be
 * published; no subscription per opening. Collections' notice carries the items it converted as
 * duplicates, so a confirmed answer shows them; an unconfirmed one (`granted: false`) has no
 * `conversions` (not known yet). A replayed answer asks collections for them.
 */
export function openChestEndpoint(deps: ChestsDeps) {
  return endpoint(OpenChest, async (req, ctx) => {
    const cmd = { appId: appOf(ctx), playerId: callerOf(ctx), chestIds: [req.chestId], kind: 'one' as const, notify: deps.notices.subject };
    const result = await openChests(deps, { ...cmd, idempotencyKey: openingKeyOf(req) }, ctx);
    if (result.replayed) return { ...(await withStoredConversions(deps.bus, deps.log, result.openings, ctx))[0]!, replayed: true, granted: true };
    const opening = result.openings[0]!;
    recordSagaOutcome('opening', 'opened');
    deps.faults.afterOpenCommit?.(opening.openingId);
    const seen = await publishAndAwait(deps, result.grants, { durable: DURABLE.collectionsOpenings, timeoutMs: deps.config.GRANT_WAIT_MS });
    recordSagaOutcome('opening', seen.has(opening.openingId) ? 'granted' : 'grant_pending');
    if (!seen.has(opening.openingId)) return { ...opening, replayed: false, granted: false };
    return { ...withNoticedConversions(opening, seen.get(opening.openingId)), replayed: false, granted: true };
  });
}
