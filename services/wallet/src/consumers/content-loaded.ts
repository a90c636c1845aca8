import { AppContentLoaded, consumer, DURABLE, markProcessed, withTransaction, type Logger, type Pool } from '@ccs/shared';
import { upsertAppRules } from '../repositories/apps-repo.js';
import { upsertCurrencies } from '../repositories/currencies-repo.js';

/** Durable name of the wallet's content consumer. */
export const CONTENT_CONSUMER = DURABLE.walletContent;

/**
 * Applies the wallet's part of an app's content (currencies and which are paid, whether players may credit) once per
 * message. An older version arriving after a newer one is recorded as processed and ignored.
 */
export function contentLoadedConsumer(pool: Pool, log: Logger) {
  return consumer({
    durable: CONTENT_CONSUMER,
    event: AppContentLoaded,
    async handle(msg, { messageId }) {
      await withTransaction(pool, async (tx) => {
        if (!(await markProcessed(tx, messageId, CONTENT_CONSUMER))) return;
        const newer = await upsertAppRules(tx, msg.appId, msg.version, msg.content.players.player_credit_allowed);
        if (!newer) {
          log.info({ appId: msg.appId, version: msg.version }, 'content version already superseded; ignored');
          return;
        }
        await upsertCurrencies(tx, msg.appId, msg.content.currencies, msg.content.compliance?.paid_currencies ?? []);
      });
    },
  });
}
