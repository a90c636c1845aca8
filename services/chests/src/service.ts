import { fileURLToPath } from 'node:url';
import {
  AppliedNotices,
  connectCacheRedis,
  ContentCache,
  ContentChanged,
  contentVersionEndpoint,
  OutboxRelay,
  type Endpoint,
  type ServiceDefinition,
  type ServiceDeps,
  type Worker,
} from '@ccs/shared';
import type { ChestsConfig } from './config.js';
import { chestGrantConsumer } from './consumers/chest-grant.js';
import { contentLoadedConsumer } from './consumers/content-loaded.js';
import { storeRefundsConsumer } from './consumers/store-refunds.js';
import type { ChestsDeps, ChestsFaults } from './deps.js';
import {
  adminExportBannerRulesEndpoint,
  adminExportOpeningsEndpoint,
  adminExportRulesEndpoint,
  adminOddsLogEndpoint,
} from './endpoints/admin-audit-export.js';
import { adminDropInputsEndpoint } from './endpoints/admin-drop-inputs.js';
import { adminChestDropsEndpoint } from './endpoints/admin-chest-drops.js';
import { adminSimulateEndpoint } from './endpoints/admin-simulate.js';
import { adminListOpeningsEndpoint } from './endpoints/admin-list-openings.js';
import { adminPlayerPaymentsEndpoint, adminProfileAssumptionsEndpoint } from './endpoints/admin-player-support.js';
import { adminStatsEndpoint } from './endpoints/admin-stats.js';
import { adminBannerStatsEndpoint } from './endpoints/admin-banner-stats.js';
import { getBannerEndpoint, getBannerOddsEndpoint, listBannersEndpoint } from './endpoints/banners.js';
import { getChestTypeEndpoint, listChestTypesEndpoint } from './endpoints/catalog.js';
import { getChestOddsEndpoint } from './endpoints/catalog-odds.js';
import { observedOddsEndpoint } from './endpoints/observed-odds.js';
import { oddsLogEndpoint } from './endpoints/odds-log.js';
import { getFairnessEndpoint, listPityEndpoint, playerOddsEndpoint, rotateSeedEndpoint, verifyOpeningEndpoint } from './endpoints/fairness.js';
import { inventoryEndpoint } from './endpoints/inventory.js';
import { listOpeningsEndpoint } from './endpoints/list-openings.js';
import { claimMailboxItemEndpoint, listMailboxEndpoint } from './endpoints/mailbox.js';
import { openBatchEndpoint } from './endpoints/open-batch.js';
import { sparkSettlement } from './workers/spark-settlement.js';
import { pullBannerEndpoint } from './endpoints/pull-banner.js';
import { sparkBannerEndpoint } from './endpoints/spark-banner.js';
import { openChestEndpoint } from './endpoints/open-chest.js';
import { purchaseChestsEndpoint } from './endpoints/purchase-chests.js';
import { purchaseRestrictionsEndpoint } from './endpoints/purchase-restrictions.js';
import { spendLimitsEndpoint } from './endpoints/spend-limits.js';
import { studioChestGrantsEndpoint } from './endpoints/studio-chest-grants.js';
import { SeedCipher } from './fairness/seed-cipher.js';
import { DropTables } from './opening/drop-tables.js';
import { OneAtATime } from './opening/one-at-a-time.js';
import { Simulations } from './simulation/runner.js';
import { mailboxSweeper } from './workers/mailbox-sweeper.js';
import { openingsRetention } from './workers/openings-retention.js';
import { unlockChestEndpoint } from './endpoints/unlock-chest.js';
import { paymentsSweeper } from './workers/payments-sweeper.js';

/**
 * Every replica takes the content version another one applied as soon as its ContentChanged
 * notice arrives, instead of when its local version pointer expires: a gateway that dropped its
 * cached catalog on that notice must not get (and cache again) the old one from this replica.
 */
function followContentChanges({ bus, cache }: ChestsDeps): Worker {
  let stop: (() => void) | undefined;
  return {
    start() {
      stop = bus.listen(ContentChanged, (n) => {
        if (n.service === 'chests') cache.heard(n.appId, n.version);
      });
    },
    async stop() {
      stop?.();
    },
  };
}

/** The chests service's dependencies, built once from the runtime's (Redis cache, outbox relay, notices, drop tables, seed cipher). */
async function chestsDeps(base: ServiceDeps<ChestsConfig>, faults: ChestsFaults): Promise<{ deps: ChestsDeps; redisCloser: Worker }> {
  const { config, log, pool, bus, nc, js } = base;
  const { redis, worker: redisCloser } = await connectCacheRedis(config.REDIS_URL, log, 'the catalog and odds');
  const deps: ChestsDeps = {
    config,
    log,
    pool,
    bus,
    nc,
    relay: new OutboxRelay(pool, js, config.NATS_PREFIX, log, config.OUTBOX_INTERVAL_MS),
    notices: new AppliedNotices(nc, config.NATS_PREFIX),
    cache: new ContentCache({ redis, namespace: 'chests', prefix: config.REDIS_PREFIX, ttlSeconds: config.CATALOG_CACHE_TTL_SECONDS, log }),
    drops: new DropTables(pool),
    cipher: new SeedCipher(pool, config.FAIRNESS_SEED_KEY, log),
    perPlayer: new OneAtATime(),
    simulations: new Simulations(config.DATABASE_URL, {
      maxConcurrent: config.SIMULATION_MAX_CONCURRENT,
      maxQueued: config.SIMULATION_MAX_QUEUED,
      queueWaitMs: config.SIMULATION_QUEUE_WAIT_MS,
      timeoutMs: config.SIMULATION_TIMEOUT_MS,
    }),
    faults,
  };
  return { deps, redisCloser };
}

/** Every endpoint the chests service answers. */
function chestsEndpoints(deps: ChestsDeps): Endpoint[] {
  return [
    listChestTypesEndpoint(deps),
    getChestTypeEndpoint(deps),
    getChestOddsEndpoint(deps),
    observedOddsEndpoint(deps),
    oddsLogEndpoint(deps),
    listBannersEndpoint(deps),
    getBannerEndpoint(deps),
    getBannerOddsEndpoint(deps),
    getFairnessEndpoint(deps),
    rotateSeedEndpoint(deps),
    listPityEndpoint(deps),
    playerOddsEndpoint(deps),
    verifyOpeningEndpoint(deps),
    inventoryEndpoint(deps),
    openChestEndpoint(deps),
    openBatchEndpoint(deps),
    pullBannerEndpoint(deps),
    sparkBannerEndpoint(deps),
    unlockChestEndpoint(deps),
    listOpeningsEndpoint(deps),
    listMailboxEndpoint(deps),
    claimMailboxItemEndpoint(deps),
    purchaseChestsEndpoint(deps),
    purchaseRestrictionsEndpoint(deps),
    spendLimitsEndpoint(deps),
    adminStatsEndpoint(deps.pool),
    adminListOpeningsEndpoint(deps),
    adminPlayerPaymentsEndpoint(deps),
    adminProfileAssumptionsEndpoint(deps),
    contentVersionEndpoint('chests', deps.pool),
    adminDropInputsEndpoint(deps),
    adminChestDropsEndpoint(deps),
    adminSimulateEndpoint(deps),
    adminBannerStatsEndpoint(deps),
    adminExportOpeningsEndpoint(deps),
    adminExportRulesEndpoint(deps),
    adminExportBannerRulesEndpoint(deps),
    adminOddsLogEndpoint(deps),
    studioChestGrantsEndpoint(deps),
  ];
}

/**
 * The chests service: catalog, inventories, the opening saga and purchases. `faults` are test
 * seams (ChestsFaults); the deployed service (`chestsService`) has none.
 */
export function chestsServiceWith(faults: ChestsFaults): ServiceDefinition<ChestsConfig> {
  return {
    name: 'chests',
    version: '0.1.0',
    schema: 'chests',
    migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
    async build(base) {
      const { deps, redisCloser } = await chestsDeps(base, faults);
      const { config, log, pool, relay, notices } = deps;
      return {
        endpoints: chestsEndpoints(deps),
        consumers: [contentLoadedConsumer(deps), chestGrantConsumer(deps), storeRefundsConsumer(deps)],
        workers: [
          relay,
          paymentsSweeper(deps),
          openingsRetention(pool, log, config.OPENINGS_RETENTION_DAYS),
          mailboxSweeper(pool, log),
          sparkSettlement(deps),
          redisCloser,
          { start: () => undefined, stop: async () => notices.close() },
          followContentChanges(deps),
          { start: () => undefined, stop: () => deps.simulations.close() },
        ],
      };
    },
  };
}

/** The chests service as deployed. */
export const chestsService: ServiceDefinition<ChestsConfig> = chestsServiceWith({});
