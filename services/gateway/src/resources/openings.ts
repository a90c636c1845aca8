import { z } from 'zod';
import { UuidSchema, type OpenChest, type OpeningView, type ReplyOf } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, NoRelationships, PageMeta, PaginationLinks, Timestamp } from './jsonapi.js';

/**
 * The opening: one shape wherever an opening appears. Its result (`Opening`: the chest, when, the
 * collectibles drawn, their statistics) and its facts (`OpeningMeta`: the opening's id, experience,
 * pity, fairness, banner, duplicate conversions) are one component each. A single opening answers
 * `{data: Opening, meta: OpeningMeta}` (the spec's chest-opening result); a batch open and a banner
 * pull answer one `Opening` per chest with its `OpeningMeta` as `meta`; the history lists each as a
 * `chest_opening` resource whose attributes are the same members. The parts that only some
 * openings have are optional, and say when they are present.
 */

/** What a duplicate became: an amount of one currency. */
const Converted = z.object({
  currency: z.string().describe('Currency code of the app.'),
  amount: Count.describe('0 when the rules give nothing for its rarity.'),
});

/** Totals per currency code of an opening's converted duplicates. */
const Conversions = z
  .record(z.string(), Count)
  .describe(
    'Duplicates converted by this opening, total per currency code, e.g. `{"coins": 40}`; `{}` when none was (docs/content.md, "Duplicates").',
  );

/** A collectible as an opening shows it: with its rarity as an attribute, no relationships. */
const OpenedCollectible = component(
  'OpenedCollectible',
  'A collectible an opening drew, with its rarity. `meta.converted` is present when it was converted as a duplicate.',
  z.object({
    type: z.literal('collectible'),
    id: z.string(),
    attributes: z.object({ name: z.string(), description: z.string(), collection_id: z.string(), images: z.array(z.string()), rarity: z.string() }),
    meta: z
      .object({
        converted: Converted.describe(
          "The player already held the app's `duplicates.max_copies` of it: it was converted into this, credited once to their wallet, and not added as a copy.",
        ),
      })
      .optional(),
  }),
);

/** An opening's pity state (null: its chest has no pity). */
const OpeningPity = component(
  'OpeningPity',
  "An opening's bad-luck protection state; null when its chest has no pity.",
  z
    .object({
      group: z.string().describe("The pity group (the chest type's slug unless its rules name a group)."),
      rarity: z.string().describe('The rarity (or better) the counter waits for.'),
      opens_since_before: Count.describe('Openings since the last one that gave that rarity or better, before this one.'),
      opens_since_after: Count.describe('The counter after this opening (0 when it gave that rarity or better).'),
      triggered: z.boolean().describe('Whether the hard guarantee shaped this opening.'),
    })
    .nullable(),
);

/** An opening's commit-reveal inputs (null: made before verifiable randomness). */
const OpeningFairness = component(
  'OpeningFairness',
  "The inputs of the opening's random stream; verify it after rotating the seed (docs/fairness.md). Null for an opening made before verifiable randomness.",
  z
    .object({
      server_seed_hash: z.string().describe('SHA-256 of the server seed, published before the opening.'),
      client_seed: z.string(),
      nonce: Count,
    })
    .nullable(),
);

/** What a banner pull's opening recorded (docs/design.md §8); absent on other openings. */
const OpeningBanner = component(
  'OpeningBanner',
  'A banner pull\'s opening: what it recorded of the banner (docs/fairness.md, "Banner pulls"). Absent on other openings.',
  z.object({
    id: z.string().describe('The banner (its id, the content slug).'),
    featured: z.boolean().describe('Whether the opening gave one of the featured collectibles.'),
    guaranteed_before: z.boolean().describe('Whether the guarantee held before it: its next item of the featured rarity was certain to be featured.'),
    spark_points_after: Count.describe("The player's spark points on the banner after it."),
    floor_rerolled: z.boolean().describe("Whether the ten-pull floor re-rolled this opening's last item."),
  }),
);

/** The result of one opening: what it drew. */
export const Opening = component(
  'Opening',
  "What one opening drew (the spec's chest-opening `data`: not a JSON:API resource). The collectibles are in the player's collection when the answer goes out, or shortly after if the collections service is slow.",
  z.object({
    chest_id: UuidSchema.describe('The opened chest.'),
    opened_at: Timestamp,
    collectibles: z.array(OpenedCollectible),
    statistics: z.object({
      total_items: Count,
      rarity_breakdown: z.record(z.string(), Count).describe('How many items of each rarity present, e.g. `{"common": 2, "rare": 1}`.'),
    }),
  }),
);

/** The facts of one opening besides what it drew. */
const OpeningFacts = {
  experience_gained: Count.describe('Sum of the per-rarity experience of the items.'),
  pity: OpeningPity,
  fairness: OpeningFairness,
  banner: OpeningBanner.optional(),
};

/** The facts of an opening as a single, batch and banner-pull answer hold them (their `meta`). */
export const OpeningMeta = component(
  'OpeningMeta',
  "An opening's facts: its id, the experience it gave, its pity and fairness, a banner pull's banner, and the duplicates it converted.",
  z.object({
    chest_consumed: z.literal(true),
    opening_id: UuidSchema.describe('This opening, as listed by `/players/me/openings`.'),
    ...OpeningFacts,
    conversions: Conversions.optional().describe(
      'Duplicates converted, total per currency code (`{}`: none). Absent when collections had not confirmed the grant in time (the message says the collectibles are on their way): the conversions are then not known yet; `/players/me/openings` shows them once applied.',
    ),
    message: z
      .string()
      .optional()
      .describe("Human-readable summary of a single opening; a batch open and a banner pull give theirs once, in the document's `meta`."),
  }),
);

/** An opening of a batch or a banner pull: its result, with its facts as `meta`. */
export const BatchOpening = component(
  'BatchOpening',
  'An opening of a batch open or a banner pull: what it drew (the `Opening` members) with its facts (`OpeningMeta`) as `meta`.',
  Opening.extend({ meta: OpeningMeta }),
);

/** The chest-opening result. */
export const ChestOpeningResult = component(
  'ChestOpeningResult',
  "The chest-opening result (the spec's exception to JSON:API: `data` is not a resource): what the opening drew, and its facts in `meta` (with `message`).",
  z.object({ data: Opening, meta: OpeningMeta }),
);

/** The results of a batch open, in the order asked. */
export const ChestOpeningBatchResult = component(
  'ChestOpeningBatchResult',
  'The results of a batch open (like the chest-opening result, not JSON:API resources): one `Opening` per chest, in the order asked, each with its `OpeningMeta` as `meta`.',
  z.object({
    data: z.array(BatchOpening),
    meta: z.object({
      chests_consumed: Count,
      experience_gained: Count.describe('Sum over the openings.'),
      message: z.string().describe('Human-readable summary.'),
    }),
  }),
);

/** One past opening. */
export const ChestOpening = component(
  'ChestOpening',
  "One past opening of the calling player: the opening's result and facts as attributes (its id is the opening's id), with its chest type and rules version.",
  z.object({
    type: z.literal('chest_opening'),
    id: UuidSchema,
    attributes: Opening.extend({
      chest_type_id: UuidSchema,
      rules_version: z.number().int().min(1),
      ...OpeningFacts,
      conversions: Conversions.nullable().describe(
        'Duplicates converted, total per currency code; null while the grant is not applied yet (or collections did not answer).',
      ),
    }),
    relationships: NoRelationships,
  }),
);

/** The calling player's openings, newest first. */
export const ChestOpeningsDocument = component(
  'ChestOpeningsDocument',
  "A page of the calling player's openings, newest first.",
  z.object({ data: z.array(ChestOpening), meta: z.object({ total_count: Count, page: PageMeta }), links: PaginationLinks }),
);

/** What an opening drew: the collectibles (a converted duplicate with `meta.converted`) and their statistics. */
export function openingData(o: OpeningView): z.output<typeof Opening> {
  const breakdown: Record<string, number> = {};
  for (const it of o.items) breakdown[it.rarity] = (breakdown[it.rarity] ?? 0) + 1;
  return {
    chest_id: o.chestId,
    opened_at: o.openedAt,
    collectibles: o.items.map((it) => ({
      type: 'collectible' as const,
      id: it.collectibleId,
      attributes: { name: it.name, description: it.description, collection_id: it.collectionId, images: it.images, rarity: it.rarity },
      ...(it.converted ? { meta: { converted: { currency: it.converted.currency, amount: it.converted.amount } } } : {}),
    })),
    statistics: { total_items: o.items.length, rarity_breakdown: breakdown },
  };
}

/**
 * An opening's duplicate conversions as totals per currency code (`{"coins": 40}`, `{}` when
 * nothing was converted), or undefined when they are not known: collections had not confirmed the
 * grant when the answer went out, or did not answer.
 */
const conversionsOf = (o: OpeningView): Record<string, number> | undefined =>
  o.conversions ? Object.fromEntries(o.conversions.map((c) => [c.currency, c.amount])) : undefined;

/** The facts every placement of an opening shows the same way: experience, pity, fairness and a pull's banner. */
const openingFacts = (o: OpeningView) => ({
  experience_gained: o.experience,
  pity: o.pity
    ? {
        group: o.pity.group,
        rarity: o.pity.rarity,
        opens_since_before: o.pity.opensSinceBefore,
        opens_since_after: o.pity.opensSinceAfter,
        triggered: o.pity.triggered,
      }
    : null,
  fairness: o.fairness ? { server_seed_hash: o.fairness.serverSeedHash, client_seed: o.fairness.clientSeed, nonce: o.fairness.nonce } : null,
  ...(o.banner
    ? {
        banner: {
          id: o.banner.bannerId,
          featured: o.banner.featured,
          guaranteed_before: o.banner.guaranteedBefore,
          spark_points_after: o.banner.sparkPointsAfter,
          floor_rerolled: o.banner.floorRerolled,
        },
      }
    : {}),
});

/** An opening's `OpeningMeta`: its facts, and its conversions once collections confirmed the grant. */
export function openingMeta(o: OpeningView): z.output<typeof OpeningMeta> {
  const conversions = conversionsOf(o);
  return { chest_consumed: true, opening_id: o.openingId, ...openingFacts(o), ...(conversions ? { conversions } : {}) };
}

/** A single opening's summary: what it drew, where it went, and the duplicates it converted. */
function openingMessage(o: ReplyOf<typeof OpenChest>, breakdown: Record<string, number>): string {
  const summary = Object.entries(breakdown)
    .map(([rarity, n]) => `${n} ${rarity}`)
    .join(', ');
  const conversions = conversionsOf(o);
  const converted = o.items.filter((it) => it.converted).length;
  const where = o.granted ? 'added to your collection' : 'on their way to your collection';
  const duplicates =
    converted && conversions
      ? `; ${converted} of them ${converted === 1 ? 'was a duplicate' : 'were duplicates'}, converted into ${Object.entries(conversions)
          .map(([c, n]) => `${n} ${c}`)
          .join(', ')}`
      : '';
  return `Chest opened: ${o.items.length} collectible${o.items.length === 1 ? '' : 's'} (${summary}) ${where}${duplicates}.`;
}

/** The chest-opening result of one opening. */
export function chestOpeningResult(o: ReplyOf<typeof OpenChest>): z.output<typeof ChestOpeningResult> {
  const data = openingData(o);
  return { data, meta: { ...openingMeta(o), message: openingMessage(o, data.statistics.rarity_breakdown) } };
}

/** The `data` of a batch result (a batch open, a banner pull): one opening with its meta per opening, in order. */
export const batchOpenings = (openings: OpeningView[]): z.output<typeof BatchOpening>[] =>
  openings.map((o) => ({ ...openingData(o), meta: openingMeta(o) }));

/** A past opening as the history lists it; its conversions null while not known. */
export const chestOpening = (o: OpeningView): z.output<typeof ChestOpening> => ({
  type: 'chest_opening',
  id: o.openingId,
  attributes: {
    ...openingData(o),
    chest_type_id: o.chestTypeId,
    rules_version: o.rulesVersion,
    ...openingFacts(o),
    conversions: conversionsOf(o) ?? null,
  },
  relationships: {},
});

/** What `ChestOpeningBatchResult` describes, as the gateway renders it. */
export type ChestOpeningBatchResult = z.output<typeof ChestOpeningBatchResult>;
/** What `ChestOpeningsDocument` describes, as the gateway renders it. */
export type ChestOpeningsDocument = z.output<typeof ChestOpeningsDocument>;
