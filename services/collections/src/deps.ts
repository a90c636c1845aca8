import type { AppliedNotices, Bus, Logger, OutboxRelay, Pool } from '@ccs/shared';
import type { CollectionsConfig } from './config.js';

/**
 * What trading and dissolving are built from: the pool, the outbox relay (credits, rewards and
 * trade events), the bus (players' friendship and account ages, the wallet's token debits and
 * refunds), where the wallet says it applied a credit, and the settings.
 */
export interface TradingDeps {
  pool: Pool;
  relay: OutboxRelay;
  bus: Bus;
  notices: AppliedNotices;
  log: Logger;
  config: Pick<CollectionsConfig, 'TRADE_CREDIT_WAIT_MS' | 'TRADE_STUCK_MS'>;
}
