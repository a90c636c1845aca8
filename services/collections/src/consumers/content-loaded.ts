import {
  AppContentLoaded,
  consumer,
  ContentChanged,
  markProcessed,
  withTransaction,
  type Bus,
  type ContentCache,
  type Logger,
  type Pool,
} from '@ccs/shared';
import { claimContentVersion, saveDuplicateRules, upsertCollections, upsertRarities } from '../repositories/content-repo.js';
import { saveTrading } from '../repositories/trading-repo.js';

export const CONTENT_CONSUMER = 'collections-app-content';

/**
 * Applies the collections' part of an app's content (rarities, collections, collectibles, the
 * trading rules, and the version's duplicate rules) once per message, then points the read cache at the new version. A version older than the stored
 * one is recorded as processed and ignored. Owned items are never touched. Once the cache points
 * at it, every gateway and collections replica is told (ContentChanged), so none serves the old
 * content from memory.
 */
export function contentLoadedConsumer(pool: Pool, cache: ContentCache, log: Logger, bus: Bus) {
  return consumer({
    durable: CONTENT_CONSUMER,
    event: AppContentLoaded,
    async handle(msg, { messageId }) {
      const applied = await withTransaction(pool, async (tx) => {
        if (!(await markProcessed(tx, messageId, CONTENT_CONSUMER))) return false;
        // Kept even for a superseded version: openings made under it are judged by its rules.
        await saveDuplicateRules(tx, msg.appId, msg.version, msg.content.duplicates);
        if (!(await claimContentVersion(tx, msg.appId, msg.version))) {
          log.info({ appId: msg.appId, version: msg.version }, 'content version already superseded; ignored');
          return false;
        }
        await upsertRarities(tx, msg.appId, msg.content.rarities);
        await upsertCollections(tx, msg.appId, msg.content.collections);
        await saveTrading(tx, msg.appId, msg.content.trading);
        return true;
      });
      if (applied) {
        await cache.announce(msg.appId, msg.version);
        announceContent(bus, log, msg.appId, msg.version);
        log.info({ appId: msg.appId, version: msg.version, collections: msg.content.collections.length }, 'content applied');
      }
    },
  });
}

/**
 * Tells the gateways (their reply caches) and the other collections replicas (their version
 * pointers) that the app's content is now `version`. Not durable: a lost notice costs at most
 * those caches' lifetimes, and the content is applied whatever happens here.
 */
function announceContent(bus: Bus, log: Logger, appId: string, version: number): void {
  try {
    bus.notify(ContentChanged, { appId, version, service: 'collections' });
  } catch (err) {
    log.warn({ err: String(err), appId, version }, 'content change not announced; caches catch up within their lifetime');
  }
}
