import type { FastifyInstance } from 'fastify';
import { GetSpendLimits, type ReplyOf } from '@ccs/shared';
import { callContext, jsonApiQuery, sendDocument } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import { getSpendLimits } from '../../openapi/operations/spend-limits.js';
import type { SpendLimitsDocument } from '../../resources/spend-limits.js';

type Standing = ReplyOf<typeof GetSpendLimits>['limits'][number];

/** A limit and the player's standing as a spend_limit resource's attributes (also the studio's player look-up). */
export const spendLimitAttributes = (l: Standing): SpendLimitsDocument['data'][number]['attributes'] => ({
  period: l.period,
  limit: l.limit,
  spent: l.spent,
  remaining: l.remaining,
  resets_at: l.resetsAt,
  ...(l.money ? { money: l.money } : {}),
  ...(l.unverifiable ? { unverifiable: l.unverifiable } : {}),
  ...(l.rule ? { rule: l.rule } : {}),
});

/** The caller's spend limits, one resource per period (`day`) and, for limits in money, per money and period (`CNY-month`). */
const limitsDocument = (r: ReplyOf<typeof GetSpendLimits>): SpendLimitsDocument => ({
  data: r.limits.map((l) => ({
    type: 'spend_limit' as const,
    id: l.money ? `${l.money}-${l.period}` : l.period,
    attributes: spendLimitAttributes(l),
    relationships: {},
  })),
  meta: { total_count: r.limits.length },
});

/** GET /api/v1/players/me/limits (DESIGN.md §7): the caller's own standing, never cached. */
export async function spendLimitRoutes(app: FastifyInstance) {
  app.get('/api/v1/players/me/limits', { config: { openapi: documented(getSpendLimits, { query: NO_QUERY }) } }, async (request, reply) => {
    jsonApiQuery(request, NO_QUERY);
    const r = await app.bus.request(GetSpendLimits, {}, callContext(request));
    reply.header('cache-control', 'no-store');
    return sendDocument(reply, 200, limitsDocument(r));
  });
}
