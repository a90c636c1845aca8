import { z } from 'zod';
import { UuidSchema, type ReplyOf, AdminSimulate, AdminChestDrops } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { drawnAgainstDisclosed } from './chest-odds.js';
import { Count, ResourceLinks, Timestamp } from './jsonapi.js';
import { selfLinks } from '../routes/v1/resource-links.js';

/** Response schemas of a chest's odds simulation and of its real drops against the disclosed odds (admin API), with their renderers typed by them. */

/** An odds simulation run. */
export const SimulationDocument = component(
  'SimulationDocument',
  'A simulation run of a chest: per rarity the disclosed long-run share against the observed one, the chi-square p-values, and pity.',
  z.object({
    data: z.object({
      type: z.literal('simulation'),
      id: UuidSchema.describe('The catalog chest.'),
      attributes: z.object({
        chest: z.object({ slug: z.string(), name: z.string(), rules_version: z.number().int() }),
        opens: Count,
        items: Count,
        seed: z.string().nullable(),
        rarities: z.array(
          z.object({
            rarity: z.string(),
            disclosed: z.number().describe('The long-run share the odds disclose (pity included).'),
            observed: z.number(),
            count: Count,
            deviation: z.number().describe('(count - expected) / its standard deviation: beyond ±3 is unusual.'),
          }),
        ),
        chi_square_p_value: z.object({ rarities: z.number(), collectibles: z.number() }),
        pity: z
          .object({ rarity: z.string(), hard: z.number().int(), hits: Count, guaranteed: Count, mean_gap: z.number(), expected_mean_gap: z.number() })
          .nullable(),
        complete_gachas: z
          .array(z.object({ collection: z.string(), collectibles: z.array(z.string()), chests: z.array(z.string()), advice: z.string() }))
          .describe(
            'The complete gachas this chest takes part in (docs/design.md §7): a collection whose completion is rewarded while these collectibles only come from paid chests (`chests`). Refused at load under `forbid_complete_gacha` or the JP rule pack; `advice` says what to change. Empty: none.',
          ),
      }),
    }),
  }),
);

/** What `SimulationDocument` describes, as the gateway renders it. */
export type SimulationDocument = z.output<typeof SimulationDocument>;

/** A chest's real drops against its disclosed odds. */
export const ChestDropsDocument = component(
  'ChestDropsDocument',
  "What the app's real openings of a chest drew per rarity, against the disclosed long-run shares of its current rules.",
  z.object({
    data: z.object({
      type: z.literal('chest_drops'),
      id: UuidSchema,
      attributes: z.object({
        chest: z.object({ slug: z.string(), name: z.string(), rules_version: z.number().int() }),
        openings: Count.describe('Openings of the chest kept (OPENINGS_RETENTION_DAYS).'),
        items: Count.describe('Items they drew.'),
        since: Timestamp.nullable().describe('The oldest opening counted; null without any.'),
        ...drawnAgainstDisclosed('the current rules'),
      }),
      links: ResourceLinks.describe('`self`: `/api/v1/admin/chests/{id}/drops`.'),
    }),
  }),
);

/** What `ChestDropsDocument` describes, as the gateway renders it. */
export type ChestDropsDocument = z.output<typeof ChestDropsDocument>;

/** A simulation's answer: what the simulated openings drew against the disclosed odds. */
export function simulationDocument(r: ReplyOf<typeof AdminSimulate>, seed: string | undefined): z.output<typeof SimulationDocument> {
  return {
    data: {
      type: 'simulation',
      id: r.chestTypeId,
      attributes: {
        chest: { slug: r.chest.slug, name: r.chest.name, rules_version: r.chest.rulesVersion },
        opens: r.opens,
        items: r.items,
        seed: seed ?? null,
        rarities: r.rarities.map((x) => ({
          rarity: x.rarity,
          disclosed: x.effective,
          observed: x.observed,
          count: x.count, // null only for an infinite deviation, as JSON rendered it before the move
          deviation: x.deviation as number,
        })),
        chi_square_p_value: r.chiSquarePValue,
        pity: r.pity && {
          rarity: r.pity.rarity,
          hard: r.pity.hard,
          hits: r.pity.hits,
          guaranteed: r.pity.guaranteed,
          mean_gap: r.pity.meanGap,
          expected_mean_gap: r.pity.expectedMeanGap,
        },
        complete_gachas: r.completeGachas ?? [],
      },
    },
  };
}

/** What real openings of a chest drew against its disclosed odds. */
export function chestDropsDocument(d: ReplyOf<typeof AdminChestDrops>, base: string): z.output<typeof ChestDropsDocument> {
  return {
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
      links: selfLinks.chestDrops(base, d.chestTypeId),
    },
  };
}
