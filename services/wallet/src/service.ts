import { fileURLToPath } from 'node:url';
import { contentVersionEndpoint, OutboxRelay, WebhookInterestCache, type ServiceDefinition } from '@ccs/shared';
import type { WalletConfig } from './config.js';
import { contentLoadedConsumer } from './consumers/content-loaded.js';
import { creditGrantsConsumer } from './consumers/credit-grants.js';
import { storeRefundsConsumer } from './consumers/store-refunds.js';
import { adminCreditEndpoint } from './endpoints/admin-credit.js';
import { adminStatsEndpoint } from './endpoints/admin-stats.js';
import { adminPlayerLedgerEndpoint } from './endpoints/admin-player-ledger.js';
import { balancesEndpoint } from './endpoints/balances.js';
import { creditEndpoint } from './endpoints/credit.js';
import { debitEndpoint } from './endpoints/debit.js';
import { listCurrenciesEndpoint } from './endpoints/list-currencies.js';
import { refundEndpoint } from './endpoints/refund.js';
import { idempotencySweeper } from './workers/idempotency-sweeper.js';

/** The wallet service: currencies, balances, the ledger, credits, the studio's grants and debits, store refunds (and the debts they leave), and the currency.credited events of its credits. */
export const walletService: ServiceDefinition<WalletConfig> = {
  name: 'wallet',
  version: '0.1.0',
  schema: 'wallet',
  migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
  build: ({ pool, log, config, js, bus }) => {
    // Publishes the currency.credited events each credit writes to the outbox (docs/webhooks.md).
    const relay = new OutboxRelay(pool, js, config.NATS_PREFIX, log);
    // …only for apps whose webhooks take them: an app without webhooks pays nothing on its credits.
    const interest = new WebhookInterestCache(bus, log);
    return {
      endpoints: [
        listCurrenciesEndpoint(pool),
        creditEndpoint(pool, relay, interest),
        debitEndpoint(pool),
        refundEndpoint(pool, relay, interest),
        balancesEndpoint(pool),
        adminStatsEndpoint(pool),
        adminPlayerLedgerEndpoint(pool),
        adminCreditEndpoint(pool, relay, interest),
        contentVersionEndpoint('wallet', pool),
      ],
      consumers: [contentLoadedConsumer(pool, log), creditGrantsConsumer(relay, interest), storeRefundsConsumer(relay, interest)],
      workers: [
        relay,
        { start: () => undefined, stop: async () => interest.stop() },
        idempotencySweeper(pool, log, config.IDEMPOTENCY_KEY_TTL_HOURS),
      ],
    };
  },
};
