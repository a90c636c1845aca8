import { randomUUID } from 'node:crypto';
import { appOf, callerOf, DURABLE, endpoint, OpenChest, publishAndAwait, recordSagaOutcome } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { withNoticedConversions, withStoredConversions } from '../duplicates/conversions.js';
import { chestErrors } from '../errors.js';
import { consumeChest } from '../opening/consume-chest.js';
import { findOpeningByKey } from '../repositories/openings-repo.js';

/**
 * chests.v1.open: the opening saga.
 * 1. Consume the chest, record the opening and its grant in one statement (see consumeChest).
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
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    if (req.idempotencyKey) {
      const first = await findOpeningByKey(deps.pool, appId, playerId, req.idempotencyKey);
      if (first && first.chestId !== req.chestId) throw chestErrors.idempotencyKeyReused();
      if (first) return { ...(await withStoredConversions(deps.bus, deps.log, [first], ctx))[0]!, replayed: true, granted: true };
    }
    const openingId = randomUUID();
    const consumed = await consumeChest(
      deps,
      { appId, playerId, chestId: req.chestId, openingId, idempotencyKey: req.idempotencyKey, notify: deps.notices.subject },
      ctx,
    );
    if (consumed.replayed)
      return { ...(await withStoredConversions(deps.bus, deps.log, [consumed.opening], ctx))[0]!, replayed: true, granted: true };
    recordSagaOutcome('opening', 'opened');
    deps.faults.afterOpenCommit?.(openingId);
    const seen = await publishAndAwait(deps, [consumed.grant], { durable: DURABLE.collectionsOpenings, timeoutMs: deps.config.GRANT_WAIT_MS });
    recordSagaOutcome('opening', seen.has(openingId) ? 'granted' : 'grant_pending');
    if (!seen.has(openingId)) return { ...consumed.opening, replayed: false, granted: false };
    return { ...withNoticedConversions(consumed.opening, seen.get(openingId)), replayed: false, granted: true };
  });
}
