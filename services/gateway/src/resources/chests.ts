import { z } from 'zod';
import { ChestSourceSchema, DecimalSchema, UuidSchema } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, NoRelationships, PageMeta, PaginationLinks, ResourceLinks, Timestamp } from './jsonapi.js';

/** Response schemas of the chest catalog, odds, inventories, openings and purchases. */

const ChestAttributes = z.object({
  name: z.string(),
  description: z.string(),
  images: z.array(z.string()).describe('Image URLs.'),
});

/** Amounts per currency code, as integers. */
const PerCurrency = z.record(z.string(), z.number().int());

/** An announced odds change not yet in force (DESIGN.md §7, odds change notice periods). */
const OddsChange = z
  .object({
    effective_at: Timestamp.describe('When the new rules take effect (the odds log entry of the change says the same).'),
    rules_version: z
      .number()
      .int()
      .min(1)
      .describe('The content version of the coming rules (`GET /chests/{id}/odds?rules_version=` discloses them).'),
  })
  .describe(
    "A change of the chest's rules announced under the app's odds change notice period (content `compliance.odds_change_notice_hours`): until `effective_at` openings roll the rules in force; absent when none is pending.",
  );

/** A chest of the catalog (a chest type). */
export const CatalogChest = component(
  'CatalogChest',
  'A chest of the catalog. `meta.price` holds its price per currency code; a currency it cannot be bought with is absent. ' +
    "With a Bearer token, `meta.purchasable` says per price currency whether the caller may buy it with that currency (the app's compliance rules: region and age), " +
    'and `meta.requires_key.allowed` and `meta.unlock.skip_allowed` whether the caller may open it with its key and skip its timer.',
  z.object({
    type: z.literal('chest'),
    id: UuidSchema,
    attributes: ChestAttributes,
    relationships: NoRelationships,
    links: ResourceLinks.describe('`self`: `/api/v1/chests/{id}`.'),
    meta: z.object({
      requires_key: z
        .object({
          currency: z.string(),
          amount: z.number().int(),
          allowed: z
            .boolean()
            .optional()
            .describe(
              'With a Bearer token only: whether the compliance rules let the caller open it with its key (false for a paid key currency from a blocked region or under the minimum age).',
            ),
        })
        .optional()
        .describe('The key this chest needs to open: `amount` of that currency, debited when it opens (docs/content.md, "Key-required chests").'),
      unlock: z
        .object({
          seconds: z.number().int().min(1),
          skip: z.object({ currency: z.string(), per_minute: z.number().positive() }).optional(),
          skip_allowed: z
            .boolean()
            .optional()
            .describe(
              'With a Bearer token only: whether the caller may skip the timer for currency (false when it has no skip, or the compliance rules refuse its paid skip currency to the caller).',
            ),
        })
        .optional()
        .describe(
          'A timer this chest must run before it opens: `seconds` once started (POST /chests/{id}/unlock), or at once by paying `ceil(remaining minutes × per_minute)` of `skip.currency` (docs/content.md, "Time-locked chests").',
        ),
      price: PerCurrency.describe('Price per currency code, e.g. `{"coins": 500, "gems": 5}`.'),
      purchasable: z
        .record(z.string(), z.boolean())
        .optional()
        .describe(
          'With a Bearer token only: per price currency, whether the compliance rules let the caller buy with it, e.g. `{"coins": true, "gems": false}` (not whether the balance suffices). ' +
            'Absent without a token, and when it cannot be determined right now.',
        ),
      odds_change: OddsChange.optional(),
    }),
  }),
);

/** The timer of a time-locked inventory chest. */
const ChestLock = z.object({
  state: z
    .enum(['locked', 'unlocking', 'unlocked'])
    .describe('`locked`: the timer has not started; `unlocking`: it runs; `unlocked`: it can be opened.'),
  unlocks_at: Timestamp.nullable().describe('When the timer ends (or ended); null while `locked`.'),
});

/** An unopened chest a player owns: its own id (the one `/open` takes) and its type's presentation. */
export const InventoryChest = component(
  'InventoryChest',
  'An unopened chest a player owns. Its `id` is this chest (the one `/chests/{id}/open` takes); `meta.chest_type_id` is its catalog chest.',
  z.object({
    type: z.literal('chest'),
    id: UuidSchema,
    attributes: ChestAttributes,
    relationships: NoRelationships,
    meta: z.object({
      source: ChestSourceSchema,
      chest_type_id: UuidSchema,
      acquired_at: Timestamp,
      lock: ChestLock.optional().describe('Only for a time-locked chest: where its timer stands.'),
    }),
  }),
);

/** The unlock call's answer: the chest with its timer, and what a skip cost. */
export const UnlockDocument = component(
  'UnlockDocument',
  'The chest after the unlock: `meta.lock` says whether its timer runs (`unlocking`) or it is `unlocked`. A skip that charged shows `meta.price_paid` and `meta.balance`.',
  z.object({
    data: InventoryChest,
    meta: z.object({
      price_paid: PerCurrency.optional().describe('What this call charged to skip the timer, e.g. `{"gems": 60}`; absent when nothing was charged.'),
      balance: z.record(z.string(), DecimalSchema).optional().describe('The balance of that currency after the skip.'),
    }),
  }),
);

/** The catalog: filtered, sorted, paginated. */
export const ChestCatalogDocument = component(
  'ChestCatalogDocument',
  'A page of the chest catalog.',
  z.object({
    data: z.array(CatalogChest),
    meta: z.object({ total_count: Count.describe('Chests matching the filter.'), page: PageMeta }),
    links: PaginationLinks,
  }),
);

/** One catalog chest. */
export const ChestDocument = component('ChestDocument', 'One catalog chest; `meta` is empty.', z.object({ data: CatalogChest, meta: z.object({}) }));

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/** The fields of an odds log entry besides what it names. */
const OddsLogFields = {
  rules_version: z.number().int().min(1).describe('The content version of the rules logged.'),
  rules_sha256: Sha256,
  effective_at: Timestamp.describe('When the rules took effect (ISO 8601 UTC with milliseconds: the string the hash covers).'),
  previous_hash: Sha256,
  entry_hash: Sha256,
};

/** A page of the odds log (DESIGN.md §7). */
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

/** What real openings of a catalog chest drew against its disclosed odds (DESIGN.md §7). */
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
const OpenedCollectible = z.object({
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
});

/** An opening's pity state (null: its chest has no pity). */
const OpeningPity = z
  .object({
    group: z.string().describe("The pity group (the chest type's slug unless its rules name a group)."),
    rarity: z.string().describe('The rarity (or better) the counter waits for.'),
    opens_since_before: Count.describe('Openings since the last one that gave that rarity or better, before this one.'),
    opens_since_after: Count.describe('The counter after this opening (0 when it gave that rarity or better).'),
    triggered: z.boolean().describe('Whether the hard guarantee shaped this opening.'),
  })
  .nullable();

/** An opening's commit-reveal inputs (null: made before verifiable randomness). */
const OpeningFairness = z
  .object({
    server_seed_hash: z.string().describe('SHA-256 of the server seed, published before the opening.'),
    client_seed: z.string(),
    nonce: Count,
  })
  .nullable();

/** What a banner pull's opening recorded (DESIGN.md §8); absent on other openings. */
export const OpeningBanner = z
  .object({
    id: z.string().describe('The banner (its id, the content slug).'),
    featured: z.boolean().describe('Whether the opening gave one of the featured collectibles.'),
    guaranteed_before: z.boolean().describe('Whether the guarantee held before it: its next item of the featured rarity was certain to be featured.'),
    spark_points_after: Count.describe("The player's spark points on the banner after it."),
    floor_rerolled: z.boolean().describe("Whether the ten-pull floor re-rolled this opening's last item."),
  })
  .describe('A banner pull\'s opening: what it recorded of the banner (docs/fairness.md, "Banner pulls").');

const OpeningMembers = {
  chest_id: UuidSchema.describe('The opened chest.'),
  opened_at: Timestamp,
  collectibles: z.array(OpenedCollectible),
  statistics: z.object({
    total_items: Count,
    rarity_breakdown: z.record(z.string(), Count).describe('How many items of each rarity present, e.g. `{"common": 2, "rare": 1}`.'),
  }),
};

/** The chest-opening result: the spec's custom `data` object, not a resource. */
export const ChestOpeningResult = component(
  'ChestOpeningResult',
  "The chest-opening result (the spec's exception to JSON:API: `data` is not a resource). The collectibles are in the player's collection when the answer goes out, or shortly after if the collections service is slow (the message then says so).",
  z.object({
    data: z.object(OpeningMembers),
    meta: z.object({
      chest_consumed: z.literal(true),
      experience_gained: Count.describe('Sum of the per-rarity experience of the items.'),
      message: z.string().describe('Human-readable summary.'),
      opening_id: UuidSchema.describe('This opening, as listed by `/players/me/openings`.'),
      pity: OpeningPity,
      fairness: OpeningFairness.describe('The inputs of its random stream; verify it after rotating the seed (docs/fairness.md).'),
      banner: OpeningBanner.optional(),
      conversions: Conversions.optional().describe(
        'Duplicates converted, total per currency code (`{}`: none). Absent when collections had not confirmed the grant in time (the message says the collectibles are on their way): the conversions are then not known yet; `/players/me/openings` shows them once applied.',
      ),
    }),
  }),
);

/** The results of a batch open, in the order asked. */
export const ChestOpeningBatchResult = component(
  'ChestOpeningBatchResult',
  "The results of a batch open (like the chest-opening result, not JSON:API resources): one per chest, in the order asked, each with the single result's `data` members and its `meta`.",
  z.object({
    data: z.array(
      z.object({
        ...OpeningMembers,
        meta: z.object({
          chest_consumed: z.literal(true),
          experience_gained: Count,
          opening_id: UuidSchema,
          pity: OpeningPity,
          fairness: OpeningFairness,
          banner: OpeningBanner.optional(),
          conversions: Conversions.optional().describe('As in the chest-opening result: absent when that opening was not confirmed in time.'),
        }),
      }),
    ),
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
  'One past opening of the calling player, with its result.',
  z.object({
    type: z.literal('chest_opening'),
    id: UuidSchema,
    attributes: z.object({
      ...OpeningMembers,
      chest_type_id: UuidSchema,
      experience_gained: Count,
      rules_version: z.number().int().min(1),
      pity: OpeningPity,
      fairness: OpeningFairness,
      banner: OpeningBanner.optional(),
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

/** Chests bought: the new inventory chests. */
export const PurchaseDocument = component(
  'PurchaseDocument',
  'The chests bought, now in the inventory; what was paid and the balance left.',
  z.object({
    data: z.array(InventoryChest),
    meta: z.object({
      purchase_id: UuidSchema,
      price_paid: z.record(z.string(), z.number()).describe('Amount paid, by currency code.'),
      balance: z.record(z.string(), DecimalSchema).describe('Balance left, by currency code, as a decimal string.'),
    }),
  }),
);

/** A player's unopened chests with the spec's inventory meta. */
export const InventoryDocument = component(
  'InventoryDocument',
  "A player's unopened chests. For another player's public profile `data` is empty and `meta` holds the counts only (no `estimated_value`, no `inventory_status`).",
  z.object({
    data: z.array(InventoryChest),
    included: z.array(z.never()).max(0).describe('Always empty.'),
    meta: z.object({
      player_id: UuidSchema,
      total_chests: Count,
      chest_types: z
        .object({ purchased: Count, earned: Count, welcome: Count, special: Count })
        .describe('Unopened chests by how they were obtained.'),
      estimated_value: z
        .record(z.string(), z.number().int())
        .optional()
        .describe(
          "Sum of the unopened chests' catalog prices, by currency code: every currency of the app's content (e.g. `coins`, `gems`, `vault_key` in the demo app), 0 where no chest held is priced in it, and no other.",
        ),
      inventory_status: z.object({ capacity: Count, used: Count, available: Count }).optional(),
      page: z
        .object({ limit: Count, offset: Count, total: Count.describe('Chests matching the filter (the whole inventory without one).') })
        .optional()
        .describe("The page shown (own or a friend's inventory); the other meta always counts the whole inventory."),
    }),
    links: PaginationLinks.optional().describe("Pages of the inventory (own or a friend's)."),
  }),
);

/** What `CatalogChest` describes, as the gateway renders it. */
export type CatalogChest = z.output<typeof CatalogChest>;
/** What `ChestOddsDocument` describes, as the gateway renders it. */
export type ChestOddsDocument = z.output<typeof ChestOddsDocument>;
/** What `ChestOpeningBatchResult` describes, as the gateway renders it. */
export type ChestOpeningBatchResult = z.output<typeof ChestOpeningBatchResult>;
/** What `ChestOpeningResult` describes, as the gateway renders it. */
export type ChestOpeningResult = z.output<typeof ChestOpeningResult>;
/** What `ChestOpeningsDocument` describes, as the gateway renders it. */
export type ChestOpeningsDocument = z.output<typeof ChestOpeningsDocument>;
/** What `InventoryChest` describes, as the gateway renders it. */
export type InventoryChest = z.output<typeof InventoryChest>;
/** What `ObservedOddsDocument` describes, as the gateway renders it. */
export type ObservedOddsDocument = z.output<typeof ObservedOddsDocument>;
/** What `OddsLogDocument` describes, as the gateway renders it. */
export type OddsLogDocument = z.output<typeof OddsLogDocument>;
/** What `PurchaseDocument` describes, as the gateway renders it. */
export type PurchaseDocument = z.output<typeof PurchaseDocument>;
/** What `UnlockDocument` describes, as the gateway renders it. */
export type UnlockDocument = z.output<typeof UnlockDocument>;
