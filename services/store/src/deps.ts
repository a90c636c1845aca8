import type { AppliedNotices, AtRestCipher, Bus, Logger, OutboxRelay, Pool, WebhookInterestCache } from '@ccs/shared';
import type { StoreConfig } from './config.js';
import type { StoreContentReader } from './content/content-reader.js';
import type { ComplianceProfiles } from './purchases/compliance-profiles.js';

/** What the store's endpoints, consumers and workers depend on, built once in service.ts. */
export interface StoreDeps {
  config: StoreConfig;
  log: Logger;
  pool: Pool;
  bus: Bus;
  relay: OutboxRelay;
  /** Tells this process when the wallet and chests applied the grants it wrote (read-your-writes). */
  notices: AppliedNotices;
  content: StoreContentReader;
  /** Seals the apps' Google service-account keys. */
  cipher: AtRestCipher;
  /** Which webhook events each app's endpoints take: the store writes its events only for apps that take them. */
  interest: WebhookInterestCache;
  /** The players' declared profiles, kept a while (the money limits' input). */
  profiles: ComplianceProfiles;
}
