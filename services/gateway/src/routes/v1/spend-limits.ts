import type { FastifyInstance } from 'fastify';
import { GetSpendLimits } from '@ccs/shared';
import { callContext, jsonApiQuery, sendDocument } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import { getSpendLimits } from '../../openapi/operations/spend-limits.js';
import { limitsDocument } from '../../resources/spend-limits.js';

/** GET /api/v1/players/me/limits (docs/design.md §7): the caller's own standing, never cached. */
export async function spendLimitRoutes(app: FastifyInstance) {
  app.get('/api/v1/players/me/limits', { config: { openapi: documented(getSpendLimits, { query: NO_QUERY }) } }, async (request, reply) => {
    jsonApiQuery(request, NO_QUERY);
    const r = await app.bus.request(GetSpendLimits, {}, callContext(request));
    reply.header('cache-control', 'no-store');
    return sendDocument(reply, 200, limitsDocument(r));
  });
}
