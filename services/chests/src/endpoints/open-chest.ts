import { randomUUID } from 'node:crypto';
import { endpoint, OpenChest, recordSagaOutcome, watchApplied } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { appOf, callerOf, chestErrors } from '../errors.js';
import { consumeChest } from '../opening/consume-chest.js';
import { findOpeningByKey } from '../repositories/openings-repo.js';

/** The durable consumer of collections that applies opening grants (read-your-writes waits on it). */
export const COLLECTIONS_GRANT_CONSUMER = 'collections-openings';

/**
 * chests.v1.open: the opening saga. Step 1 consumes the chest in one transaction (see
 * consumeChest); then the grant is published at once (the relay would also do it later) and the
 * answer waits, bounded by GRANT_WAIT_MS, until collections applied it. If collections is down the
 * opening still succeeds: the chest is consumed and the grant is durable.
 */
export function openChestEndpoint(deps: ChestsDeps) {
  return endpoint(OpenChest, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    if (req.idempotencyKey) {
      const first = await findOpeningByKey(deps.pool, appId, playerId, req.idempotencyKey);
      if (first && first.chestId !== req.chestId) throw chestErrors.idempotencyKeyReused();
      if (first) return { ...first, replayed: true, granted: true };
    }
    const openingId = randomUUID();
    const { opening, replayed } = await consumeChest(deps.pool, deps.drops, { appId, playerId, chestId: req.chestId, openingId, idempotencyKey: req.idempotencyKey }, ctx);
    if (replayed) return { ...opening, replayed, granted: true };
    recordSagaOutcome('opening', 'opened');
    if (deps.config.CHESTS_FAULT === 'exit_after_open_commit') {
      deps.log.fatal({ openingId }, 'fault injection: exiting after the opening committed, before publishing');
      process.exit(86);
    }
    // Subscribe before publishing, so the applied notice cannot be missed.
    const applied = watchApplied(deps.nc, deps.config.NATS_PREFIX, [openingId], COLLECTIONS_GRANT_CONSUMER);
    await deps.relay.publishNow([openingId]).catch((err) => deps.log.warn({ err: String(err), openingId }, 'grant not published yet; the relay will retry'));
    const seen = await applied.done(deps.config.GRANT_WAIT_MS);
    recordSagaOutcome('opening', seen.has(openingId) ? 'granted' : 'grant_pending');
    return { ...opening, replayed: false, granted: seen.has(openingId) };
  });
}
