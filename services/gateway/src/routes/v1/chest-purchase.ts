import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CurrencyCodeSchema, PurchaseChests } from '@ccs/shared';
import { callContext, idempotencyKeyOf, jsonApiQuery, parseBody, sendDocument, uuidParam } from '../../lib/http.js';
import { NO_QUERY } from '../../openapi/route-doc.js';
import { purchaseDocument } from '../../resources/chests.js';

export const PurchaseBodySchema = z.object({
  data: z.object({
    type: z.literal('purchase', { error: 'data.type must be "purchase".' }),
    attributes: z.object({
      currency: CurrencyCodeSchema.describe('currency code'),
      quantity: z.number().int().min(1).max(10).default(1),
    }),
  }),
});

/** POST /api/v1/chests/{id}/purchase: buys catalog chests into the caller's inventory. */
export async function purchase(request: FastifyRequest, reply: FastifyReply) {
  const chestTypeId = uuidParam(request, 'id');
  jsonApiQuery(request, NO_QUERY);
  const idempotencyKey = idempotencyKeyOf(request);
  const body = parseBody(PurchaseBodySchema, request.body);
  const { currency, quantity } = body.data.attributes;
  const r = await request.server.bus.request(PurchaseChests, { chestTypeId, currency, quantity, idempotencyKey }, callContext(request));
  reply.header('cache-control', 'no-store');
  if (r.replayed) reply.header('idempotent-replayed', 'true');
  return sendDocument(reply, 201, purchaseDocument(r, currency));
}
