import { ComplianceProfileChanged, encodeJson, prefixed } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';

/** How long an answer waits for the NATS server to confirm the notice before it goes anyway. */
const NOTICE_FLUSH_BOUND_MS = 1_000;

/**
 * Tells every gateway that a player's declared country or birth year changed (committed), so each
 * forgets the purchase restrictions it kept for them (the catalog's per-player flags). Call it
 * after the commit and before answering: the flush returns once the NATS server has taken the
 * notice, and so has queued it to every subscribed gateway connection before the answer is even
 * sent. The gateway that forwards the answer receives the notice first on the same connection;
 * another replica receives it before any request the player sends after reading the answer,
 * unless its own connection lags that long (then, as for a lost notice, within
 * PURCHASE_FLAGS_TTL_MS). Never fails the change: a notice that cannot be sent is logged.
 */
export async function announceComplianceProfileChange(d: Pick<PlayersDeps, 'nc' | 'config' | 'log'>, appId: string, playerId: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const payload = ComplianceProfileChanged.payload.parse({ appId, playerId });
    d.nc.publish(prefixed(d.config.NATS_PREFIX, ComplianceProfileChanged.subject), encodeJson(payload));
    const bound = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), NOTICE_FLUSH_BOUND_MS)));
    if ((await Promise.race([d.nc.flush(), bound])) === 'late') throw new Error(`not confirmed within ${NOTICE_FLUSH_BOUND_MS} ms`);
  } catch (err) {
    d.log.warn({ err: String(err), appId, playerId }, 'compliance profile change not announced; gateways catch up within PURCHASE_FLAGS_TTL_MS');
  } finally {
    clearTimeout(timer);
  }
}
