import type { FastifyInstance } from 'fastify';
import friendsRoutes from './players/friends-routes.js';
import meRoutes from './players/me-routes.js';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import sessionRoutes from './players/session-routes.js';

/** Routes of the players resource: sessions (register, login, refresh, logout, guests), me, friends. */
export default async function playersRoutes(app: FastifyInstance) {
  // Guest creation, logout and DELETE take no body; clients that still send the JSON:API
  // Content-Type with an empty body are answered normally. Body routes still require a body.
  allowEmptyJsonApiBody(app);
  await app.register(sessionRoutes);
  await app.register(meRoutes);
  await app.register(friendsRoutes);
}
