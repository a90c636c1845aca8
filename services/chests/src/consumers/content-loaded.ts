import { AppContentLoaded, consumer, ContentChanged, DURABLE, markProcessed, withTransaction } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { applyContentVersion } from '../repositories/content-repo.js';
import { applyChestMechanics } from '../repositories/chest-mechanics-repo.js';

/** Durable name of the chests service's content consumer. */
const CONTENT_CONSUMER = DURABLE.chestsContent;

/**
 * Applies an app's content version: stores it and, when newer than the current one, replaces the
 * catalog (chests already owned keep their type). Idempotent: the message id is recorded in the
 * same transaction. The cache learns the new version after the commit, then every gateway and
 * chests replica (ContentChanged), so none serves the old catalog from memory.
 */
export function contentLoadedConsumer(deps: Pick<ChestsDeps, 'pool' | 'cache' | 'log' | 'bus'>) {
  return consumer({
    durable: CONTENT_CONSUMER,
    event: AppContentLoaded,
    async handle(msg, info) {
      const changed = await withTransaction(deps.pool, async (tx) => {
        if (!(await markProcessed(tx, info.messageId, CONTENT_CONSUMER))) return false;
        const current = await applyContentVersion(tx, msg.appId, msg.version, msg.content);
        if (current) await applyChestMechanics(tx, msg.appId, msg.content);
        return current;
      });
      if (changed) {
        await deps.cache.announce(msg.appId, msg.version);
        announceContent(deps, msg.appId, msg.version);
        await deps.cache.dropOlderVersions(msg.appId, msg.version);
        deps.log.info(
          { appId: msg.appId, version: msg.version, chests: msg.content.chests.length },
          'chest catalog replaced by a new content version',
        );
      }
    },
  });
}

/**
 * Tells the gateways (their reply caches) and the other chests replicas (their version pointers)
 * that the app's catalog is now `version`. Not durable: a lost notice costs at most those caches'
 * lifetimes, and the content is applied whatever happens here.
 */
function announceContent(deps: Pick<ChestsDeps, 'bus' | 'log'>, appId: string, version: number): void {
  try {
    deps.bus.notify(ContentChanged, { appId, version, service: 'chests' });
  } catch (err) {
    deps.log.warn({ err: String(err), appId, version }, 'content change not announced; caches catch up within their lifetime');
  }
}
