import { AppContentLoaded, consumer, DURABLE, markProcessed, withTransaction, type Logger, type Pool } from '@ccs/shared';
import type { StoreContentReader } from '../content/content-reader.js';
import { applyContentVersion } from '../repositories/content-repo.js';

/**
 * Keeps the store's part of each app's content (the store section, compliance and currency codes)
 * per version, once per message; an older version arriving after a newer one is stored, not made current.
 */
export function contentLoadedConsumer(pool: Pool, log: Logger, content: StoreContentReader) {
  return consumer({
    durable: DURABLE.storeContent,
    event: AppContentLoaded,
    async handle(msg, { messageId }) {
      await withTransaction(pool, async (tx) => {
        if (!(await markProcessed(tx, messageId, DURABLE.storeContent))) return;
        const current = await applyContentVersion(tx, msg.appId, msg.version, msg.content);
        if (!current) log.info({ appId: msg.appId, version: msg.version }, 'content version already superseded; stored, not current');
      });
      content.forget(msg.appId);
    },
  });
}
