import { z } from 'zod';
import {
  oddsLogRecord,
  UuidSchema,
  type GetChestOdds,
  type GetObservedOdds,
  type GetPlayerOdds,
  type OddsLogEntryView,
  type ReplyOf,
} from '@ccs/shared';
import { component } from '../openapi/components.js';
import type { ResourceLinks as Links } from '../routes/v1/resource-links.js';
import { OddsChange } from './chests.js';
import { Count, NoRelationships, PageMeta, PaginationLinks, ResourceLinks, Timestamp } from './jsonapi.js';

type ChestOddsView = ReplyOf<typeof GetChestOdds>;
type ObservedOddsView = ReplyOf<typeof GetObservedOdds>;
type PlayerOddsView = ReplyOf<typeof GetPlayerOdds>;

/**
 * A catalog chest's odds (type `chest_odds`), what its real openings drew (`chest_observed_odds`)
 * and the app's odds log (`odds_log_entry`), docs/design.md §7: their response schemas and the
 * functions that render them, typed by those schemas.
 */

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/** The fields of an odds log entry besides what it names. */
const OddsLogFields = {
  rules_version: z.number().int().min(1).describe('The content version of the rules logged.'),
  rules_sha256: Sha256,
  effective_at: Timestamp.describe('When the rules took effect (ISO 8601 UTC with milliseconds: the string the hash covers).'),
  previous_hash: Sha256,
  entry_hash: Sha256,
};

/** A page of the odds log (docs/design.md §7). */
export const OddsLogDocument = component(
  'OddsLogDocument',
  'The app\'s odds log, oldest first: append-only and hash-chained, one entry per chest type or banner whose rules a content version changed. A chest entry has `chest_type_id`: `entry_hash` = SHA-256 of `previous_hash + rules_sha256 + chest_type_id + rules_version + effective_at` (the strings as shown, concatenated), and `rules_sha256` is SHA-256 of the canonical JSON (keys sorted) of the chest odds document\'s `attributes.rules` for that `rules_version`. A banner entry has `banner_id` instead: `entry_hash` = SHA-256 of `previous_hash + rules_sha256 + "banner:" + banner_id + ":" + rules_version + effective_at`, and `rules_sha256` is SHA-256 of the canonical JSON of the banner odds document\'s `attributes.banner_rules` at that `banner_rules_version`. `previous_hash` of the first entry is 64 zeros.',
  z.object({
    data: z.array(
      z.object({
        type: z.literal('odds_log_entry'),
        id: z.string().describe("The entry's sequence number in the app's log, from 1."),
        attributes: z.union([
          z.object({ chest_type_id: UuidSchema.describe('The chest type whose rules changed.'), ...OddsLogFields }).strict(),
          z.object({ banner_id: z.string().describe('The banner (its id, the content slug) whose rules changed.'), ...OddsLogFields }).strict(),
        ]),
        relationships: NoRelationships,
      }),
    ),
    meta: z.object({ total_count: Count, page: PageMeta }),
    links: PaginationLinks,
  }),
);

/**
 * Per rarity, what real openings drew against the disclosed shares, and the chi-square p-value: the
 * public observed odds and the studio's drops alike (`rules`: whose disclosure, e.g. "that version").
 */
export function drawnAgainstDisclosed(rules: string) {
  return {
    rarities: z.array(
      z.object({
        rarity: z.string(),
        disclosed: z.number().min(0).max(1).describe(`The long-run share of the rarity among items ${rules} disclosed (pity included).`),
        observed: z.number().min(0).max(1).describe('Its share among the items drawn.'),
        count: Count,
      }),
    ),
    chi_square_p_value: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .describe(
        'Goodness of fit of the counts to the disclosed shares: a very small value says the draws do not follow the disclosure. Null before any opening.',
      ),
  };
}

/** What real openings of a catalog chest drew against its disclosed odds (docs/design.md §7). */
export const ObservedOddsDocument = component(
  'ObservedOddsDocument',
  "What the app's kept openings of a catalog chest drew under one rules version, per rarity, against the long-run shares that version disclosed (pity included), with a chi-square goodness-of-fit p-value. Aggregates of every player's openings, nobody's own.",
  z.object({
    data: z.object({
      type: z.literal('chest_observed_odds'),
      id: UuidSchema,
      attributes: z.object({
        rules_version: z.number().int().min(1).describe('The content version whose rules the counted openings rolled with.'),
        openings: Count.describe('Openings of the chest under that version that are kept (OPENINGS_RETENTION_DAYS).'),
        items: Count.describe('Items they drew.'),
        since: Timestamp.nullable().describe('The oldest opening counted; null without any.'),
        ...drawnAgainstDisclosed('that version'),
      }),
      relationships: NoRelationships,
      links: ResourceLinks.describe('`self`: `/api/v1/chests/{id}/odds/observed`, with `?rules_version=` when one was asked for.'),
    }),
  }),
);

/** The odds of a catalog chest. */
export const ChestOddsDocument = component(
  'ChestOddsDocument',
  "The exact odds of a catalog chest, computed from the same rules the roll uses. A probability is the expected share of that rarity or collectible among one opening's items (each list sums to 1).",
  z.object({
    data: z.object({
      type: z.literal('chest_odds'),
      id: UuidSchema.describe('The catalog chest.'),
      attributes: z.object({
        items_per_open: z.object({ min: z.number().int(), max: z.number().int(), expected: z.number() }),
        rarities: z.array(z.object({ rarity: z.string(), probability: z.number().min(0).max(1), expected_count: z.number().min(0) })),
        collectibles: z.array(z.object({ id: z.string(), rarity: z.string(), probability: z.number().min(0).max(1) })),
        rules_version: z.number().int().min(1).describe('Content version the rules come from.'),
        rules: z
          .record(z.string(), z.unknown())
          .describe(
            'The published rules of that version, as the content file states them (docs/content.md): what `scripts/verify-opening.mjs` recomputes from.',
          ),
        rule_inputs: z
          .object({
            rarities: z.array(z.object({ id: z.string(), drop_rate: z.number(), rank: z.number().int() })),
            collectibles: z.array(z.object({ id: z.string(), collection_id: z.string(), rarity: z.string() })),
          })
          .describe(
            "What the rules are read against: the version's rarities, and the collectibles of the chest's pool in content order (the draw order within a rarity).",
          ),
        pity: z
          .object({
            rarity: z.string(),
            hard: z.number().int().describe('The opening made after `hard - 1` openings without that rarity or better gives at least one.'),
            soft_start: z.number().int().nullable(),
            soft_step: z.number().nullable(),
            group: z.string(),
            effective_rarities: z
              .array(z.object({ rarity: z.string(), probability: z.number().min(0).max(1), expected_count: z.number().min(0) }))
              .describe('Long-run shares with pity in play: the odds at each counter value weighted by how often openings are made at it.'),
          })
          .nullable()
          .describe('Bad-luck protection; null when the chest has none.'),
        duplicates: z
          .object({ max_copies: z.number().int(), convert: z.object({ currency: z.string(), by_rarity: z.record(z.string(), z.number().int()) }) })
          .nullable()
          .describe("The app's duplicate rules: a collectible already held `max_copies` times is converted into currency; null when none."),
      }),
      relationships: NoRelationships,
      links: ResourceLinks.describe('`self`: `/api/v1/chests/{id}/odds`, with `?rules_version=` when one was asked for.'),
    }),
    meta: z
      .object({
        player: z
          .object({
            opens_since_pity: Count.nullable(),
            guaranteed_within: z.number().int().min(1).nullable().describe('Openings until the guaranteed one, counting it.'),
            rarities: z.array(z.object({ rarity: z.string(), probability: z.number().min(0).max(1), expected_count: z.number().min(0) })),
          })
          .optional()
          .describe("With a Bearer token: the calling player's odds for their next opening, pity applied."),
        odds_change: OddsChange.optional(),
      })
      .optional()
      .describe(
        'With a Bearer token, `player`; for the rules in force (no `rules_version`) while a change is announced, `odds_change`: the attributes disclose the rules that roll now.',
      ),
  }),
);

/**
 * Drops binary floating-point noise (0.48750000000000004 → 0.4875) from a disclosed figure: 15
 * significant digits are beyond what any rule expresses and keep every sum at 1 within 1e-13.
 */
const exact = (x: number): number => Number(x.toPrecision(15));

const shares = (list: { rarity: string; probability: number; expectedCount: number }[]) =>
  list.map((r) => ({ rarity: r.rarity, probability: exact(r.probability), expected_count: exact(r.expectedCount) }));

/** The odds document of a catalog chest; with the caller's own odds (`mine`) when a player asked for the rules in force. */
export function chestOddsDocument(o: ChestOddsView, links: Links, mine: PlayerOddsView | undefined): z.output<typeof ChestOddsDocument> {
  return {
    data: {
      type: 'chest_odds',
      id: o.chestTypeId,
      attributes: {
        items_per_open: { ...o.itemsPerOpen, expected: exact(o.itemsPerOpen.expected) },
        rarities: shares(o.rarities),
        collectibles: o.collectibles.map((c) => ({ ...c, probability: exact(c.probability) })),
        rules_version: o.rulesVersion,
        rules: o.rules,
        rule_inputs: o.ruleInputs,
        pity: o.pity && {
          rarity: o.pity.rarity,
          hard: o.pity.hard,
          soft_start: o.pity.softStart,
          soft_step: o.pity.softStep,
          group: o.pity.group,
          effective_rarities: shares(o.pity.effectiveRarities),
        },
        duplicates: o.duplicates,
      },
      relationships: {},
      links,
    },
    ...(mine || o.oddsChange
      ? {
          meta: {
            ...(mine
              ? { player: { opens_since_pity: mine.opensSincePity, guaranteed_within: mine.guaranteedWithin, rarities: shares(mine.rarities) } }
              : {}),
            ...(o.oddsChange ? { odds_change: { effective_at: o.oddsChange.effectiveAt, rules_version: o.oddsChange.rulesVersion } } : {}),
          },
        }
      : {}),
  };
}

/** What the real openings of a catalog chest drew against its disclosed odds. */
export const observedOddsDocument = (o: ObservedOddsView, links: Links): z.output<typeof ObservedOddsDocument> => ({
  data: {
    type: 'chest_observed_odds',
    id: o.chestTypeId,
    attributes: {
      rules_version: o.rulesVersion,
      openings: o.openings,
      items: o.items,
      since: o.since,
      rarities: o.rarities.map((r) => ({ rarity: r.rarity, disclosed: exact(r.disclosed), observed: exact(r.observed), count: r.count })),
      chi_square_p_value: o.chiSquarePValue === null ? null : exact(o.chiSquarePValue),
    },
    relationships: {},
    links,
  },
});

/** One odds log entry: its public fields, its sequence as its id. */
export function oddsLogEntry(e: OddsLogEntryView): z.output<typeof OddsLogDocument>['data'][number] {
  const { seq: _seq, ...attributes } = oddsLogRecord(e);
  return { type: 'odds_log_entry', id: String(e.seq), attributes, relationships: {} };
}

/** What `OddsLogDocument` describes, as the gateway renders it. */
export type OddsLogDocument = z.output<typeof OddsLogDocument>;
