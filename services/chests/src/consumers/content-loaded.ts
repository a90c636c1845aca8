import { AppContentLoaded, consumer, markProcessed, withTransaction } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { applyContentVersion } from '../repositories/content-repo.js';

/** Durable name of the chests service's content consumer. */
export const CONTENT_CONSUMER = 'chests-content';

/**
 * Applies an app's content version: stores it and, when newer than the current one, replaces the
 * catalog (chests already owned keep their type). Idempotent: the message id is recorded in the
 * same transaction. The cache learns the new version after the commit.
 */
export function contentLoadedConsumer(deps: Pick<ChestsDeps, 'pool' | 'cache' | 'log'>) {
  return consumer({
    durable: CONTENT_CONSUMER,
    event: AppContentLoaded,
    async handle(msg, info) {
      const changed = await withTransaction(deps.pool, async (tx) => {
        if (!(await markProcessed(tx, info.messageId, CONTENT_CONSUMER))) return false;
        return applyContentVersion(tx, msg.appId, msg.version, msg.content);
      });
      if (changed) {
        await deps.cache.contentChanged(msg.appId, msg.version);
        deps.log.info({ appId: msg.appId, version: msg.version, chests: msg.content.chests.length }, 'chest catalog replaced by a new content version');
      }
    },
  });
}
