import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { MAX_BATCH_OPEN, OpenChest, OpenChests } from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, sendDocument, uuidParam, writeKeysOf } from '../../lib/http.js';
import { NO_QUERY } from '../../openapi/route-doc.js';
import { batchOpenings, chestOpeningResult, type ChestOpeningBatchResult } from '../../resources/openings.js';

/** GET or POST /api/v1/chests/{id}/open: consumes the chest and answers the chest-opening result. */
export async function openChest(request: FastifyRequest, reply: FastifyReply) {
  const chestId = uuidParam(request, 'id');
  const keys = writeKeysOf(request);
  jsonApiQuery(request, NO_QUERY);
  const o = await request.server.bus.request(OpenChest, { chestId, ...keys }, callContext(request));
  reply.header('cache-control', 'no-store');
  if (o.replayed && keys.idempotencyKey) reply.header('idempotent-replayed', 'true');
  return sendDocument(reply, 200, chestOpeningResult(o));
}

/** POST /chests/open: the chests to open, in order, as resource identifiers. */
export const OpenChestsBodySchema = z.object({
  data: z
    .array(
      z.object({
        type: z.literal('chest', { error: 'type must be "chest".' }),
        id: z.string().uuid({ error: 'id must be the UUID of an inventory chest.' }),
      }),
    )
    .min(1, { error: 'Name at least one chest.' })
    .max(MAX_BATCH_OPEN, { error: `At most ${MAX_BATCH_OPEN} chests per request.` }),
});

/**
 * POST /api/v1/chests/open: opens up to 50 of the caller's chests at once, in order, all or
 * nothing. `data` holds one chest-opening result per chest (its `data` members plus its `meta`);
 * the document's meta sums them up.
 */
export async function openMany(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const keys = writeKeysOf(request);
  const chestIds = parseBody(OpenChestsBodySchema, request.body).data.map((d) => d.id);
  const r = await request.server.bus.request(OpenChests, { chestIds, ...keys }, callContext(request));
  const items = r.openings.reduce((n, o) => n + o.items.length, 0);
  reply.header('cache-control', 'no-store');
  if (r.replayed && keys.idempotencyKey) reply.header('idempotent-replayed', 'true');
  return sendDocument(reply, 200, {
    data: batchOpenings(r.openings),
    meta: {
      chests_consumed: r.openings.length,
      experience_gained: r.openings.reduce((n, o) => n + o.experience, 0),
      message: `${r.openings.length} chest${r.openings.length === 1 ? '' : 's'} opened: ${items} collectibles ${r.granted ? 'added to your collection' : 'on their way to your collection'}.`,
    },
  } satisfies ChestOpeningBatchResult);
}
