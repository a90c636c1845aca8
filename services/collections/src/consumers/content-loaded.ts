import { AppContentLoaded, consumer, markProcessed, withTransaction, type Logger, type Pool } from '@ccs/shared';
import type { CatalogCache } from '../cache/catalog-cache.js';
import { claimContentVersion, upsertCollections, upsertRarities } from '../repositories/content-repo.js';

export const CONTENT_CONSUMER = 'collections-app-content';

/**
 * Applies the collections' part of an app's content (rarities, collections, collectibles) once
 * per message, then points the read cache at the new version. A version older than the stored
 * one is recorded as processed and ignored. Owned items are never touched.
 */
export function contentLoadedConsumer(pool: Pool, cache: CatalogCache, log: Logger) {
  return consumer({
    durable: CONTENT_CONSUMER,
    event: AppContentLoaded,
    async handle(msg, { messageId }) {
      const applied = await withTransaction(pool, async (tx) => {
        if (!(await markProcessed(tx, messageId, CONTENT_CONSUMER))) return false;
        if (!(await claimContentVersion(tx, msg.appId, msg.version))) {
          log.info({ appId: msg.appId, version: msg.version }, 'content version already superseded; ignored');
          return false;
        }
        await upsertRarities(tx, msg.appId, msg.content.rarities);
        await upsertCollections(tx, msg.appId, msg.content.collections);
        return true;
      });
      if (applied) {
        await cache.announce(msg.appId, msg.version);
        log.info({ appId: msg.appId, version: msg.version, collections: msg.content.collections.length }, 'content applied');
      }
    },
  });
}
