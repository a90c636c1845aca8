import type { FastifyInstance } from 'fastify';

/** Routes of the currencies resource (filled in by the currencies work). */
export default async function currenciesRoutes(_app: FastifyInstance) {}
