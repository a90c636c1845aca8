import type { FastifyInstance } from 'fastify';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import { CATALOG_QUERY, CHEST_QUERY, getChest, listChests } from './chest-catalog.js';
import { getObservedOdds, getOdds, listOddsLog, ODDS_LOG_QUERY, ODDS_QUERY } from './chest-odds.js';
import { openChest, OpenChestsBodySchema, openMany } from './chest-opening.js';
import { purchase, PurchaseBodySchema } from './chest-purchase.js';
import { unlock, UnlockBodySchema } from './chest-unlock.js';
import * as docs from '../../openapi/operations/chests.js';

// The chest routes: the catalog and its odds, opening, unlocking and buying, each in a file of its own.

/** The chest catalog and its odds (app scope: a Bearer token adds the caller's own figures). */
export async function catalogRoutes(app: FastifyInstance) {
  app.get('/api/v1/chests', { config: { openapi: documented(docs.listChests, { query: CATALOG_QUERY }) } }, listChests);
  app.get('/api/v1/chests/:id', { config: { openapi: documented(docs.getChest, { query: CHEST_QUERY }) } }, getChest);
  app.get('/api/v1/chests/:id/odds', { config: { openapi: documented(docs.getChestOdds, { query: ODDS_QUERY }) } }, getOdds);
  app.get('/api/v1/odds-log', { config: { openapi: documented(docs.listOddsLog, { query: ODDS_LOG_QUERY }) } }, listOddsLog);
  app.get('/api/v1/chests/:id/odds/observed', { config: { openapi: documented(docs.getObservedOdds, { query: ODDS_QUERY }) } }, getObservedOdds);
}

/** Opening, unlocking and buying chests (player scope). */
export async function chestActionRoutes(app: FastifyInstance) {
  app.get('/api/v1/chests/:id/open', { config: { openapi: documented(docs.openChest, { query: NO_QUERY }) } }, openChest);
  // POST open takes no body: an empty one sent with the JSON:API media type is fine too.
  await app.register(async (noBody) => {
    allowEmptyJsonApiBody(noBody);
    noBody.post('/api/v1/chests/:id/open', { config: { openapi: documented(docs.openChestPost, { query: NO_QUERY }) } }, openChest);
    // Unlock: no body (or an empty one) starts the timer; a body skips it.
    noBody.post(
      '/api/v1/chests/:id/unlock',
      { config: { openapi: documented(docs.unlockChest, { query: NO_QUERY, body: { schema: UnlockBodySchema, required: false } }) } },
      unlock,
    );
  });
  app.post(
    '/api/v1/chests/open',
    {
      config: {
        bodyType: 'jsonapi',
        openapi: documented(docs.openChests, { query: NO_QUERY, body: { schema: OpenChestsBodySchema, required: true } }),
      },
    },
    openMany,
  );
  app.post(
    '/api/v1/chests/:id/purchase',
    {
      config: {
        bodyType: 'jsonapi',
        openapi: documented(docs.purchaseChests, { query: NO_QUERY, body: { schema: PurchaseBodySchema, required: true } }),
      },
    },
    purchase,
  );
}
