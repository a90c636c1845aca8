import { AdminRotateKeys, ApiKeysChanged, encodeJson, endpoint, prefixed, withTransaction } from '@ccs/shared';
import { rotateKeys } from '../apps/rotate-keys.js';
import type { PlayersDeps } from '../deps.js';

/**
 * Operator command: new keys for an app; the old ones keep working for the grace period asked.
 * Gateways are told at once (ApiKeysChanged), so a key revoked now stops working now, not after
 * their APIKEY_CACHE_TTL_MS. Internal NATS only.
 */
export function adminRotateKeysEndpoint(d: PlayersDeps) {
  return endpoint(AdminRotateKeys, async (req) => {
    const rotated = await withTransaction(d.pool, (tx) => rotateKeys(tx, req));
    d.log.info(
      { appId: req.appId, kinds: rotated.keys.map((k) => k.kind), retired: rotated.retired.length, graceSeconds: req.graceSeconds },
      'api keys rotated',
    );
    d.nc.publish(prefixed(d.config.NATS_PREFIX, ApiKeysChanged.subject), encodeJson(ApiKeysChanged.payload.parse({ appId: req.appId })));
    return rotated;
  });
}
