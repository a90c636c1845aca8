import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminChestDrops, AdminSimulate, UuidSchema } from '@ccs/shared';
import { z } from 'zod';
import { jsonApiQuery, parseBody, sendDocument } from '../../lib/http.js';
import { NO_QUERY } from '../../openapi/route-doc.js';
import { studioCall } from './studio-call.js';
import { gatewayErrors } from '../../errors.js';
import { linkBase } from './resource-links.js';
import { simulationDocument, chestDropsDocument } from '../../resources/studio-chest-odds.js';

/** The admin API's chest routes: the odds simulator and the observed drops, both computed by chests (the owner of the drop tables). */

/** The chest of the path, by catalog id or slug (404 chest_not_found for what cannot name one). */
function chestNamed(request: FastifyRequest): { chestTypeId: string } | { slug: string } {
  const id = (request.params as Record<string, string>).id ?? '';
  if (!id || id.length > 200 || [...id].some((ch) => ch.charCodeAt(0) < 0x20)) throw gatewayErrors.chestNotFound();
  return UuidSchema.safeParse(id).success ? { chestTypeId: id.toLowerCase() } : { slug: id };
}

/**
 * How long the gateway waits for a simulation's answer: chests' longest queue wait
 * (SIMULATION_QUEUE_WAIT_MS, at most 60 s) and run (SIMULATION_TIMEOUT_MS, at most 600 s), plus
 * the lookups and the worker's start; chests answers 503 overloaded or simulation_timeout first.
 */
export const SIMULATION_ANSWER_TIMEOUT_MS = 675_000;

/** The simulation's body: how many openings (default 10,000, at most 100,000) and an optional seed (hex) to make it reproducible. */
export const SimulationBody = z.object({
  data: z.object({
    type: z.literal('simulation', { error: 'data.type must be "simulation".' }),
    attributes: z
      .object({
        opens: z.number().int().min(1).max(100_000).default(10_000),
        seed: z
          .string()
          .regex(/^(?:[0-9a-f]{2}){1,64}$/, { error: 'seed takes hex bytes (an even number of 0-9 a-f digits, at most 128)' })
          .optional(),
      })
      .strict()
      .default({ opens: 10_000 }),
  }),
});
/**
 * POST /api/v1/admin/chests/{id}/simulation: the odds simulator (docs/content.md, "Odds
 * simulator") on the chest's current rules: observed against disclosed shares per rarity, a
 * chi-square p-value, and what pity did. The same code rolls real openings. chests runs it in a
 * worker thread, one per app at a time (429 `simulation_busy` otherwise), bounded
 * (services/chests/src/simulation); the gateway only routes and renders.
 */
export async function simulation(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const { opens, seed } = parseBody(SimulationBody, request.body).data.attributes;
  const r = await request.server.bus.request(
    AdminSimulate,
    { appId: request.tenant!.appId, ...chestNamed(request), opens, ...(seed ? { seed } : {}) },
    studioCall(request),
    { timeoutMs: SIMULATION_ANSWER_TIMEOUT_MS },
  );
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, simulationDocument(r, seed));
}

/**
 * GET /api/v1/admin/chests/{id}/drops: what real openings of the chest drew, per rarity, against
 * the disclosed long-run shares of its current rules, with a chi-square p-value (chests computes them).
 */
export async function drops(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const d = await request.server.bus.request(AdminChestDrops, { appId: request.tenant!.appId, ...chestNamed(request) }, studioCall(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, chestDropsDocument(d, linkBase(request)));
}
