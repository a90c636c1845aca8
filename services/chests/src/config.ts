import { availableParallelism } from 'node:os';
import { AtRestKeySetting, BaseConfigSchema } from '@ccs/shared';
import { z } from 'zod';

const sweepInterval = z.coerce.number().int().min(50).max(600_000);
const staleAfter = z.coerce.number().int().min(100).max(86_400_000);

/** chests service settings, from the environment. */
export const ChestsConfigSchema = BaseConfigSchema.extend({
  /** How long an open waits for collections to apply the grant (read-your-writes); 200 regardless. */
  GRANT_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(2000),
  /** Lifetime of cached catalog pages, chest details and odds (keys also carry the content version). */
  CATALOG_CACHE_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  /** How often the outbox relay looks for messages not yet published. */
  OUTBOX_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  /** How often the payments sweeper looks for unsettled payments (purchases, keys, timer skips); default 15 s. */
  PAYMENT_SWEEP_INTERVAL_MS: sweepInterval.optional(),
  /** A payment unsettled for this long was interrupted (a crash): the sweeper refunds it; default 60 s. */
  PAYMENT_STALE_MS: staleAfter.optional(),
  /** Former names of PAYMENT_SWEEP_INTERVAL_MS and PAYMENT_STALE_MS, still read when the new ones are unset. */
  PURCHASE_SWEEP_INTERVAL_MS: sweepInterval.optional(),
  PURCHASE_STALE_MS: staleAfter.optional(),
  /**
   * Openings (the audit of every roll, with its fairness inputs and pity state) are kept at least
   * this long; a daily sweep deletes older ones. The chest rows stay, so an old chest is never
   * opened twice.
   */
  OPENINGS_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
  /** How often spark points left once a pity group's last banner has ended are settled (converted to its spark currency, or lapsed). */
  SPARK_SETTLE_INTERVAL_MS: z.coerce.number().int().min(1000).max(86_400_000).default(60_000),
  /**
   * Odds simulations (chests.v1.admin_simulate) running at once in this chests process, across
   * apps, each in a worker thread (one per app at a time anyway, across replicas). Default: one
   * less than the CPUs, at least 1, so the event loop keeps a core.
   */
  SIMULATION_MAX_CONCURRENT: z.coerce
    .number()
    .int()
    .positive()
    .default(Math.max(1, availableParallelism() - 1)),
  /**
   * Simulations waiting for a turn in this chests process at once; another gets 503 `overloaded`
   * at once. Each waiting one holds its app's lock (a Postgres connection of its own).
   */
  SIMULATION_MAX_QUEUED: z.coerce.number().int().min(0).max(1000).default(8),
  /** How long a simulation waits for its turn before 503 `overloaded` (the gateway waits for the answer this long, and the timeout, at most). */
  SIMULATION_QUEUE_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(10_000),
  /** A simulation running longer is stopped: 503 `simulation_timeout`. */
  SIMULATION_TIMEOUT_MS: z.coerce.number().int().positive().max(600_000).default(60_000),
  /**
   * Key (32 bytes, 64 hex digits or base64) that encrypts players' server seeds at rest, so a
   * reader of the database cannot predict rolls (docs/fairness.md). Unset: a key stored in the
   * database is used, which is fine for development only.
   */
  FAIRNESS_SEED_KEY: AtRestKeySetting,
});
export type ChestsConfig = z.infer<typeof ChestsConfigSchema>;

/** The payments sweeper's pass interval and staleness: the PAYMENT_* settings, else their former PURCHASE_* names, else 15 s and 60 s. */
export function paymentSweep(config: ChestsConfig): { everyMs: number; staleMs: number } {
  return {
    everyMs: config.PAYMENT_SWEEP_INTERVAL_MS ?? config.PURCHASE_SWEEP_INTERVAL_MS ?? 15_000,
    staleMs: config.PAYMENT_STALE_MS ?? config.PURCHASE_STALE_MS ?? 60_000,
  };
}
