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
  // players: registration's currency; collections: the credits of converted duplicates and rewards;
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
  // players: the starter chest and studio grants; collections: the chests of collection rewards;
  // store: the chests a verified store purchase bought.
  { publishers: ['players', 'collections', 'store'] },
);

/** An app's content, loaded as a new version; each service keeps the part it owns. */
export const AppContentLoaded = defineEvent(
  'grants.apps.content',
  z.object({ appId: UuidSchema, version: z.number().int().min(1), content: AppContentSchema }),
  { publishers: ['players'] },
);

/**
 * The items of one chest opening, granted exactly once: collections adds them to the player's
 * collection, players adds the experience. Message id = opening id.
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
     * What granted the items: a chest's opening (absent: older messages), or a banner's spark
     * exchange (DESIGN.md §8: one featured collectible, no chest, no experience; the id is the
     * exchange's); `bannerId` names the banner of a banner pull's opening or of the exchange.
     */
    source: z.enum(['opening', 'spark']).optional(),
    bannerId: z.string().optional(),
    /**
     * A banner pull's opening: what it recorded of the banner (OpeningView.banner), for the
     * `banner.pulled` webhook. Absent on other grants and on a spark exchange.
     */
    banner: z.object({ featured: z.boolean(), guaranteedBefore: z.boolean() }).optional(),
  }),
  { publishers: ['chests'] },
);
