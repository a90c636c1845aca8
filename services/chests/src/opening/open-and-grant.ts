import { DURABLE, publishAndAwait, recordSagaOutcome, type CallContext, type OpeningView } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { withNoticedConversions, withStoredConversions } from '../duplicates/conversions.js';
import { openChests, type OpenCommand } from './open-chests.js';

/** The openings answered: replayed from an earlier request with the key, or opened now; `granted` when collections applied every grant in time. */
export interface OpenedAndGranted {
  openings: OpeningView[];
  replayed: boolean;
  granted: boolean;
}

/**
 * The opening saga, for a single open, a batch and a banner pull alike:
 * 1. open the chests (openChests: the chests consumed, the openings and their grants recorded in
 *    one statement), or replay the openings an Idempotency-Key made before (with the conversions
 *    collections stored for them: `granted`, as they were applied long since);
 * 2. publish the grants at once, from memory, and wait for the stream's acknowledgement (the
 *    outbox relay publishes them later if this fails);
 * 3. answer once collections has applied them (read-your-writes: the collection read right after
 *    shows the items), bounded by GRANT_WAIT_MS. If collections is down the opening still
 *    succeeds: the chests are consumed and the grants durable; `granted: false`, and the openings
 *    not confirmed carry no `conversions` (not known yet).
 * The wait is one entry per opening in this process's AppliedNotices, registered before a grant
 * can be published; no subscription per opening. Counts each opening `opened`, then `granted` or
 * `grant_pending` (`ccs_saga_outcomes_total`, saga `opening`); the `afterOpenCommit` fault hook
 * runs once per opening between the commit and the publish.
 */
export async function openAndGrant(deps: ChestsDeps, cmd: Omit<OpenCommand, 'notify'>, ctx: CallContext): Promise<OpenedAndGranted> {
  const result = await openChests(deps, { ...cmd, notify: deps.notices.subject }, ctx);
  if (result.replayed) return { openings: await withStoredConversions(deps.bus, deps.log, result.openings, ctx), replayed: true, granted: true };
  for (const o of result.openings) {
    recordSagaOutcome('opening', 'opened');
    deps.faults.afterOpenCommit?.(o.openingId);
  }
  const seen = await publishAndAwait(deps, result.grants, { durable: DURABLE.collectionsOpenings, timeoutMs: deps.config.GRANT_WAIT_MS });
  const openings = result.openings.map((o) => {
    const applied = seen.has(o.openingId);
    recordSagaOutcome('opening', applied ? 'granted' : 'grant_pending');
    return applied ? withNoticedConversions(o, seen.get(o.openingId)) : o;
  });
  return { openings, replayed: false, granted: result.openings.every((o) => seen.has(o.openingId)) };
}
