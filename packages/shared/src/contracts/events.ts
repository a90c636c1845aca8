import { z } from 'zod';
import { defineEvent } from './subject.js';
import { AppContentSchema } from './content.js';
import { DecimalSchema, UuidSchema } from './context.js';

/**
 * Credits granted by another service (registration, refunds, duplicate conversions, collection
 * rewards, spark conversions); applied once
 * per message id, and a credit with its own `reference` once per reference.
 */
export const WalletCreditGrant = defineEvent(
  'grants.wallet.credit',
  z.object({
    appId: UuidSchema,
    playerId: UuidSchema,
    reason: z.enum([
      'initial_currency',
      'welcome_bonus',
      'registration',
      'refund',
      'admin',
      'duplicate_conversion',
      'collection_reward',
      'spark_conversion',
      'store_purchase',
      'trade_dissolve',
    ]),
    credits: z
      .array(
        z.object({
          currency: z.string(),
          amount: DecimalSchema,
          /**
           * The credit's own ledger reference (e.g. `opening:<id>:slot:<n>`): it gets a ledger row of
           * its own, at most one per reference. Absent: credits are summed per currency under the message id.
           */
          reference: z
            .string()
            .regex(/^[\x21-\x7e]{1,200}$/)
            .optional(),
        }),
      )
      .min(1),
  }),
  // players: registration's currency; collections: the credits of converted duplicates, rewards and dissolves;
  // chests: spark points left at a banner's end; store: what a verified store purchase bought.
  { publishers: ['players', 'collections', 'chests', 'store'] },
);

/** A chest granted into a player's inventory with an id chosen by the sender (idempotent on it). */
export const ChestGrant = defineEvent(
  'grants.chests.grant',
  z.object({
    appId: UuidSchema,
    playerId: UuidSchema,
    inventoryChestId: UuidSchema,
    /** Catalog chest type; absent means the app's starter chest type. */
    chestTypeId: z.string().optional(),
    source: z.enum(['purchased', 'earned', 'welcome', 'special']),
  }),
  // players: the starter chest; chests: studio grants (admin_grant_chests); collections: the
  // chests of collection rewards; store: the chests a verified store purchase bought.
  { publishers: ['players', 'chests', 'collections', 'store'] },
);

/** An app's content, loaded as a new version; each service keeps the part it owns. */
export const AppContentLoaded = defineEvent(
  'grants.apps.content',
  z.object({ appId: UuidSchema, version: z.number().int().min(1), content: AppContentSchema }),
  { publishers: ['players'] },
);

/**
 * The items of one chest opening, granted exactly once: collections adds them to the player's
 * collection, players adds the experience, egress sends `chest.opened` (and `banner.pulled` for a
 * banner pull's opening). Message id = opening id.
 */
export const OpeningGranted = defineEvent(
  'grants.openings.granted',
  z.object({
    openingId: UuidSchema,
    appId: UuidSchema,
    playerId: UuidSchema,
    chestTypeId: z.string(),
    openedAt: z.string(),
    experience: z.number().int().min(0),
    /** The content version whose rules made the opening (its duplicate rules apply); absent on older messages. */
    rulesVersion: z.number().int().min(1).optional(),
    items: z.array(z.object({ slot: z.number().int().min(0), collectibleId: z.string(), collectionId: z.string(), rarity: z.string() })).min(1),
    /**
     * `spark`: a banner's spark exchange granted as an opening (one featured collectible, no chest,
     * no experience, the id the exchange's) by the versions before SparkGranted. Chests no longer
     * writes it; one still in the stream or an outbox is applied as it was: collections adds the
     * item, egress sends `banner.sparked` for it (fromLegacySparkGrant) and no `chest.opened`.
     * Absent or `opening`: a chest's opening.
     */
    source: z.enum(['opening', 'spark']).optional(),
    /** The banner of a banner pull's opening (and of a `spark` grant above). */
    bannerId: z.string().optional(),
    /**
     * A banner pull's opening: what it recorded of the banner (OpeningView.banner), for the
     * `banner.pulled` webhook. Absent on other grants.
     */
    banner: z.object({ featured: z.boolean(), guaranteedBefore: z.boolean() }).optional(),
  }),
  { publishers: ['chests'] },
);

/**
 * A banner's spark exchange: `spark.cost` spark points taken for one featured collectible, granted
 * exactly once. Collections adds the collectible (judged by the duplicate rules of `rulesVersion`,
 * completions and their rewards following as for an opening's item); egress sends the
 * `banner.sparked` webhook event. No chest is opened and no experience is gained. Message id =
 * exchange id, written to chests' outbox in the exchange's transaction.
 */
export const SparkGranted = defineEvent(
  'grants.sparks.granted',
  z.object({
    exchangeId: UuidSchema,
    appId: UuidSchema,
    playerId: UuidSchema,
    bannerId: z.string(),
    collectibleId: z.string(),
    collectionId: z.string(),
    rarity: z.string(),
    exchangedAt: z.string(),
    /** The content version the exchange was made under (its duplicate rules apply). */
    rulesVersion: z.number().int().min(1),
  }),
  { publishers: ['chests'] },
);
