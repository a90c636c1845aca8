import type { FastifyInstance } from 'fastify';
import friendsRoutes from './players/friends-routes.js';
import meRoutes from './players/me-routes.js';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import { logoutRoutes, sessionRoutes } from './players/session-routes.js';

// Guest creation, logout and DELETE take no body; clients that still send the JSON:API
// Content-Type with an empty body are answered normally. Body routes still require a body.

/** Sessions of the players resource: register, login, refresh, guests (app scope). */
export async function playerSessionRoutes(app: FastifyInstance) {
  allowEmptyJsonApiBody(app);
  await app.register(sessionRoutes);
}

/** The calling player's own routes: logout, me, friends (player scope). */
export async function playerOwnRoutes(app: FastifyInstance) {
  allowEmptyJsonApiBody(app);
  await app.register(logoutRoutes);
  await app.register(meRoutes);
  await app.register(friendsRoutes);
}
