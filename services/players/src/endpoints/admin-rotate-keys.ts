import { AdminRotateKeys, endpoint, withTransaction } from '@ccs/shared';
import { rotateKeys } from '../apps/rotate-keys.js';
import type { PlayersDeps } from '../deps.js';

/**
 * Operator command: new keys for an app; the old ones keep working for the grace period asked
 * (gateways cache a key's answer for APIKEY_CACHE_TTL_MS more). Internal NATS only.
 */
export function adminRotateKeysEndpoint(d: PlayersDeps) {
  return endpoint(AdminRotateKeys, async (req) => {
    const rotated = await withTransaction(d.pool, (tx) => rotateKeys(tx, req));
    d.log.info(
      { appId: req.appId, kinds: rotated.keys.map((k) => k.kind), retired: rotated.retired.length, graceSeconds: req.graceSeconds },
      'api keys rotated',
    );
    return rotated;
  });
}
