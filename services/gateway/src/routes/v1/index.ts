import type { FastifyInstance } from 'fastify';
import playersRoutes from './players.js';
import currenciesRoutes from './currencies.js';
import collectionsRoutes from './collections.js';
import chestsRoutes from './chests.js';
import inventoryRoutes from './inventory.js';
import mailboxRoutes from './mailbox.js';
import fairnessRoutes from './fairness.js';

/**
 * Every resource's routes under /api/v1. The spec's unprefixed paths (/players/login,
 * /currencies, /currencies/{id}/credit) are registered by their resource files as aliases.
 */
export default async function v1Routes(app: FastifyInstance) {
  await app.register(playersRoutes);
  await app.register(currenciesRoutes);
  await app.register(collectionsRoutes);
  await app.register(chestsRoutes);
  await app.register(inventoryRoutes);
  await app.register(mailboxRoutes);
  await app.register(fairnessRoutes);
}
