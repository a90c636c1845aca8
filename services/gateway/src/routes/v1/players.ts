import type { FastifyInstance } from 'fastify';

/** Routes of the players resource (filled in by the players work). */
export default async function playersRoutes(_app: FastifyInstance) {}
