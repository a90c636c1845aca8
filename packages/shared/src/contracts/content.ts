import { z } from 'zod';
import { DecimalSchema } from './context.js';

/**
 * The content of one app, as loaded from a content file. Each service stores the part it owns.
 * Chests, rarities and collections are added to this schema by the chests and collections work.
 */
export const CurrencyContentSchema = z.object({
  code: z.string().regex(/^[a-z][a-z0-9_]{1,31}$/),
  name: z.string().min(1).max(64),
  /** Largest amount a single credit may add. */
  max_credit: DecimalSchema.default('100000'),
});

export const PlayerRulesSchema = z.object({
  initial_currency: z.record(z.string(), z.number().int().min(0)),
  welcome_bonus: z.record(z.string(), z.number().int().min(0)),
  /** Chest type id (from the chests section) granted to every new player. */
  starter_chest_type: z.string().min(1),
  inventory_capacity: z.number().int().min(1).max(10_000).default(100),
  access_token_ttl_seconds: z.number().int().min(60).max(86_400).default(900),
  refresh_token_ttl_seconds: z.number().int().min(3600).max(90 * 86_400).default(30 * 86_400),
  /** Whether a player's own key may credit (the spec's flow); else only the app's secret key. */
  player_credit_allowed: z.boolean().default(true),
});

export const AppContentSchema = z
  .object({
    currencies: z.array(CurrencyContentSchema).min(1),
    players: PlayerRulesSchema,
  })
  .passthrough();
export type AppContent = z.infer<typeof AppContentSchema>;
