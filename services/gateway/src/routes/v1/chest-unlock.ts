import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CurrencyCodeSchema, UnlockChest } from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, sendDocument, uuidParam } from '../../lib/http.js';
import { NO_QUERY } from '../../openapi/route-doc.js';
import { unlockDocument } from '../../resources/chests.js';

/** POST /chests/{id}/unlock: no body starts the timer; `skip_with` pays to skip it. */
export const UnlockBodySchema = z.object({
  data: z.object({
    type: z.literal('unlock', { error: 'data.type must be "unlock".' }),
    attributes: z.object({ skip_with: CurrencyCodeSchema.describe('the currency to skip the timer with') }).strict(),
  }),
});

/** POST /api/v1/chests/{id}/unlock: starts a time-locked chest's timer, or skips it for currency. */
export async function unlock(request: FastifyRequest, reply: FastifyReply) {
  const chestId = uuidParam(request, 'id');
  jsonApiQuery(request, NO_QUERY);
  const skipWith = request.body === undefined ? undefined : parseBody(UnlockBodySchema, request.body).data.attributes.skip_with;
  const r = await request.server.bus.request(UnlockChest, { chestId, skipWith }, callContext(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, unlockDocument(r));
}
