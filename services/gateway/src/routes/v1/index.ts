import type { FastifyInstance } from 'fastify';
import { routeNotFound } from '../../plugins/errors.js';
import { credentialScopes } from '../../plugins/scopes.js';
import { playerOwnRoutes, playerSessionRoutes } from './players.js';
import { creditRoutes, currencyRoutes } from './currencies.js';
import { collectionRoutes, playerCollectionRoutes } from './collections.js';
import { catalogRoutes, chestActionRoutes } from './chests.js';
import { bannerRoutes } from './banners.js';
import { inventoryRoutes } from './inventory.js';
import { mailboxRoutes } from './mailbox.js';
import { fairnessRoutes } from './fairness.js';
import { spendLimitRoutes } from './spend-limits.js';
import { studioRoutes } from './studio.js';
import { bannerPullRoutes } from './banner-pulls.js';
import { storeNotificationRoutes, storePurchaseRoutes } from './store.js';
import { tradingRoutes } from './trading.js';

/**
 * Every resource's routes under /api/v1 (and the spec's unprefixed aliases /players/login,
 * /currencies, /currencies/{id}/credit), each registered in the scope that protects it
 * (plugins/scopes.ts): `app` needs the apikey, `player` also a player's Bearer token.
 */
export default async function v1Routes(app: FastifyInstance) {
  await credentialScopes(app, {
    app: [playerSessionRoutes, currencyRoutes, collectionRoutes, catalogRoutes, bannerRoutes],
    player: [
      playerOwnRoutes,
      creditRoutes,
      playerCollectionRoutes,
      chestActionRoutes,
      inventoryRoutes,
      mailboxRoutes,
      fairnessRoutes,
      spendLimitRoutes,
      bannerPullRoutes,
      storePurchaseRoutes,
      tradingRoutes,
    ],
    studio: [studioRoutes],
  });
  // Called by Apple and Google, which send no apikey: public, the store service verifies them.
  await app.register(storeNotificationRoutes);
  // An unknown path under /api asks for the apikey first (401 without one, 404 with one), so a
  // caller without a key learns nothing of which routes exist.
  await app.register(
    async (api) => {
      api.addHook('onRequest', api.requireTenant);
      api.setNotFoundHandler(routeNotFound);
    },
    { prefix: '/api' },
  );
}
