import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminChestDrops, AdminDropInputs, AppError, UuidSchema } from '@ccs/shared';
import { z } from 'zod';
import { jsonApiQuery, parseBody, sendDocument } from '../../lib/http.js';
import { NO_QUERY } from '../../openapi/route-doc.js';
import { studioCall, type Schemas } from './studio-call.js';

/** The admin API's chest routes: the odds simulator (a worker thread, ../../simulation) and the observed drops chests computes. */

/** The chest of the path, by catalog id or slug (404 chest_not_found for what cannot name one). */
function chestNamed(request: FastifyRequest): { chestTypeId: string } | { slug: string } {
  const id = (request.params as Record<string, string>).id ?? '';
  if (!id || id.length > 200 || [...id].some((ch) => ch.charCodeAt(0) < 0x20))
    throw AppError.notFound('chest_not_found', 'No such chest in this app.', { parameter: 'id' });
  return UuidSchema.safeParse(id).success ? { chestTypeId: id.toLowerCase() } : { slug: id };
}

/** The chest of the path with its current rules, as the simulator rolls them. */
async function chestOf(request: FastifyRequest) {
  return request.server.bus.request(AdminDropInputs, { appId: request.tenant!.appId, ...chestNamed(request) }, studioCall(request));
}

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
 * chi-square p-value, and what pity did. The same code rolls real openings. It runs in a worker
 * thread, one per app at a time (429 `simulation_busy` otherwise), bounded (../../simulation).
 */
export async function simulation(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const { opens, seed } = parseBody(SimulationBody, request.body).data.attributes;
  const inputs = await chestOf(request);
  const r = await request.server.simulations.run(request.tenant!.appId, {
    rules: inputs.rules,
    rarities: inputs.rarities,
    collectibles: inputs.collectibles,
    opens,
    ...(seed ? { seed } : {}),
  });
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: {
      type: 'simulation',
      id: inputs.chestTypeId,
      attributes: {
        chest: { slug: inputs.slug, name: inputs.name, rules_version: inputs.contentVersion },
        opens: r.opens,
        items: r.items,
        seed: seed ?? null,
        rarities: r.rarities.map((x) => ({ rarity: x.rarity, disclosed: x.effective, observed: x.observed, count: x.count, deviation: x.deviation })),
        chi_square_p_value: { rarities: r.chiSquare.rarities.pValue, collectibles: r.chiSquare.collectibles.pValue },
        pity: r.pity && {
          rarity: r.pity.rarity,
          hard: r.pity.hard,
          hits: r.pity.hits,
          guaranteed: r.pity.guaranteed,
          mean_gap: r.pity.gap.mean,
          expected_mean_gap: r.pity.gap.expectedMean,
        },
      },
    },
  } satisfies Schemas['SimulationDocument']);
}

/**
 * GET /api/v1/admin/chests/{id}/drops: what real openings of the chest drew, per rarity, against
 * the disclosed long-run shares of its current rules, with a chi-square p-value (chests computes them).
 */
export async function drops(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const d = await request.server.bus.request(AdminChestDrops, { appId: request.tenant!.appId, ...chestNamed(request) }, studioCall(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: {
      type: 'chest_drops',
      id: d.chestTypeId,
      attributes: {
        chest: { slug: d.chest.slug, name: d.chest.name, rules_version: d.chest.rulesVersion },
        openings: d.openings,
        items: d.items,
        since: d.since,
        rarities: d.rarities.map((r) => ({ rarity: r.rarity, disclosed: r.disclosed, observed: r.observed, count: r.count })),
        chi_square_p_value: d.chiSquarePValue,
      },
    },
  } satisfies Schemas['ChestDropsDocument']);
}
