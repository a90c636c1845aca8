import { fileURLToPath } from 'node:url';
import { AppliedNotices, connectCacheRedis, ContentCache, contentVersionEndpoint, OutboxRelay, type ServiceDefinition } from '@ccs/shared';
import type { CollectionsConfig } from './config.js';
import { CatalogReader } from './catalog/catalog-reader.js';
import { contentLoadedConsumer } from './consumers/content-loaded.js';
import { openingGrantedConsumer, type CollectionsFaults } from './consumers/opening-granted.js';
import { sparkGrantedConsumer } from './consumers/spark-granted.js';
import { adminStatsEndpoint } from './endpoints/admin-stats.js';
import { dissolveEndpoint } from './endpoints/dissolve.js';
import { getTradeEndpoint, listTradesEndpoint, offerTradeEndpoint, tradeActionEndpoint } from './endpoints/trades.js';
import { adminCancelTradeEndpoint, adminPlayerTradesEndpoint } from './endpoints/admin-trades.js';
import { tradesSweeper } from './workers/trades-sweeper.js';
import type { TradingDeps } from './deps.js';
import { getCollectibleEndpoint } from './endpoints/get-collectible.js';
import { getCollectionEndpoint } from './endpoints/get-collection.js';
import { openingConversionsEndpoint } from './endpoints/opening-conversions.js';
import { listCollectiblesEndpoint } from './endpoints/list-collectibles.js';
import { listCollectionCollectiblesEndpoint } from './endpoints/list-collection-collectibles.js';
import { listCollectionsEndpoint } from './endpoints/list-collections.js';
import { playerCollectionEndpoint } from './endpoints/player-collection.js';
import { followContentChanges } from './workers/follow-content-changes.js';

/**
 * The collections service: each app's collections and collectibles, and what every player owns;
 * it converts duplicates past the app's max_copies and credits them through its outbox, and
 * grants collection rewards. `faults` are test seams; the deployed service has none.
 */
export function collectionsServiceWith(faults: CollectionsFaults): ServiceDefinition<CollectionsConfig> {
  return {
    name: 'collections',
    version: '0.1.0',
    schema: 'collections',
    migrationsDir: fileURLToPath(new URL('../migrations', import.meta.url)),
    async build({ pool, log, config, bus, js, nc }) {
      const { redis, worker: redisCloser } = await connectCacheRedis(config.REDIS_URL, log, 'collections and collectibles');
      const cache = new ContentCache({
        redis,
        namespace: 'collections',
        prefix: config.REDIS_PREFIX,
        ttlSeconds: config.COLLECTIONS_CACHE_TTL_SECONDS,
        log,
      });
      const catalog = new CatalogReader(pool, cache);
      const relay = new OutboxRelay(pool, js, config.NATS_PREFIX, log, config.OUTBOX_INTERVAL_MS);
      const trading: TradingDeps = { pool, relay, bus, notices: new AppliedNotices(nc, config.NATS_PREFIX), log, config };
      return {
        endpoints: [
          listCollectionsEndpoint(pool, catalog),
          getCollectionEndpoint(pool, catalog),
          listCollectionCollectiblesEndpoint(pool, catalog),
          listCollectiblesEndpoint(catalog),
          getCollectibleEndpoint(pool, catalog),
          playerCollectionEndpoint(pool, catalog),
          adminStatsEndpoint(pool),
          contentVersionEndpoint('collections', pool),
          openingConversionsEndpoint(pool),
          dissolveEndpoint(trading),
          offerTradeEndpoint(trading),
          tradeActionEndpoint(trading),
          getTradeEndpoint(trading),
          listTradesEndpoint(trading),
          adminPlayerTradesEndpoint(trading),
          adminCancelTradeEndpoint(trading),
        ],
        consumers: [
          contentLoadedConsumer(pool, cache, log, bus),
          openingGrantedConsumer({ pool, relay, log, faults }),
          sparkGrantedConsumer({ pool, relay, log, faults }),
        ],
        workers: [
          relay,
          redisCloser,
          followContentChanges(bus, cache),
          tradesSweeper(trading, config.TRADE_SWEEP_INTERVAL_MS),
          { start: () => undefined, stop: async () => trading.notices.close() },
        ],
      };
    },
  };
}

/** The collections service as deployed. */
export const collectionsService: ServiceDefinition<CollectionsConfig> = collectionsServiceWith({});
