import { ComplianceProfileChanged, encodeJson, PlayerLockChanged, prefixed, type EventContract } from '@ccs/shared';
import type { z } from 'zod';
import type { PlayersDeps } from '../deps.js';

/** How long an answer waits for the NATS server to confirm the notice before it goes anyway. */
const NOTICE_FLUSH_BOUND_MS = 1_000;

type NoticeDeps = Pick<PlayersDeps, 'nc' | 'config' | 'log'>;

/**
 * Publishes a core-NATS notice that every gateway hears, and waits (at most a second) for the NATS
 * server to take it. Call it after the commit and before answering: once the flush returns the
 * server has queued the notice to every subscribed gateway connection, before the answer is even
 * sent. The gateway that forwards the answer receives the notice first on the same connection;
 * another replica has it queued before any request sent after the answer, and confirms it has read
 * it with one PING round trip before trusting what it kept (Bus.heardAll). Never fails the change:
 * a notice that cannot be sent is logged with `stale`, what the gateways then keep and for how long.
 */
async function announce<P extends z.ZodType>(d: NoticeDeps, event: EventContract<P>, payload: z.infer<P>, stale: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    d.nc.publish(prefixed(d.config.NATS_PREFIX, event.subject), encodeJson(event.payload.parse(payload)));
    const bound = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), NOTICE_FLUSH_BOUND_MS)));
    if ((await Promise.race([d.nc.flush(), bound])) === 'late') throw new Error(`not confirmed within ${NOTICE_FLUSH_BOUND_MS} ms`);
  } catch (err) {
    d.log.warn({ err: String(err), subject: event.subject }, `notice not announced; ${stale}`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Tells every gateway that a player's declared country or birth year changed (committed), so each
 * forgets the purchase restrictions it kept for them (the catalog's per-player flags); a gateway
 * that misses it catches up within PURCHASE_FLAGS_TTL_MS.
 */
export function announceComplianceProfileChange(d: NoticeDeps, appId: string, playerId: string): Promise<void> {
  return announce(d, ComplianceProfileChanged, { appId, playerId }, 'gateways catch up within PURCHASE_FLAGS_TTL_MS');
}

/**
 * Tells every gateway that the studio locked or unlocked a player (committed), so each forgets
 * what it knew of that player's lock and refuses (or admits again) their tokens from the next
 * request; a gateway that misses it catches up within PLAYER_LOCKS_TTL_MS.
 */
export function announcePlayerLockChange(d: NoticeDeps, appId: string, playerId: string, locked: boolean): Promise<void> {
  return announce(d, PlayerLockChanged, { appId, playerId, locked }, 'gateways catch up within PLAYER_LOCKS_TTL_MS');
}
