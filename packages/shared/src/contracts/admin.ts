import { z } from 'zod';
import { UuidSchema } from './context.js';
import { defineQuery, defineSubject } from './subject.js';

// Operator subjects behind `npm run admin`: internal NATS only, never routed by the gateway. This
// file holds apps and their keys; the others are in admin-*.ts beside it, exported from here too.
export * from './admin-stats.js';
export * from './admin-players.js';
export * from './admin-drops.js';
export * from './admin-audit.js';
export * from './admin-content.js';
export * from './admin-export.js';
export * from './admin-support.js';

/** Who may use a key: game clients (publishable) or the studio's servers (secret). */
export const ApiKeyKindSchema = z.enum(['publishable', 'secret']);

/** Longest grace period a rotation may give the old keys: 30 days. */
export const MAX_KEY_GRACE_SECONDS = 30 * 86_400;

/**
 * Issues new keys for an app (of the given kinds; by default every kind it has live keys of)
 * and schedules its old keys of those kinds to stop working `graceSeconds` from now (0: at once).
 */
export const AdminRotateKeys = defineSubject(
  'players.v1.admin_rotate_keys',
  z.object({
    appId: UuidSchema,
    kinds: z.array(ApiKeyKindSchema).min(1).max(2).optional(),
    graceSeconds: z.number().int().min(0).max(MAX_KEY_GRACE_SECONDS),
  }),
  z.object({
    appId: UuidSchema,
    /** The new keys, in clear: this answer is the only place they ever appear. */
    keys: z.array(z.object({ kind: ApiKeyKindSchema, key: z.string() })),
    /** The keys being retired and when each stops working (ISO 8601 UTC). */
    retired: z.array(z.object({ kind: ApiKeyKindSchema, createdAt: z.string(), revokedAt: z.string() })),
  }),
  { callers: ['admin'] },
);

/** One app as an operator lists it. */
export const AdminAppSummarySchema = z.object({
  appId: UuidSchema,
  name: z.string(),
  isDemo: z.boolean(),
  contentVersion: z.number().int(),
  /** ISO 8601 UTC. */
  createdAt: z.string(),
  players: z.number().int().min(0),
  /** Keys that work now (retiring keys still in their grace period included). */
  liveKeys: z.object({ publishable: z.number().int().min(0), secret: z.number().int().min(0) }),
});
export type AdminAppSummary = z.infer<typeof AdminAppSummarySchema>;

/** Every app, oldest first. */
export const AdminListApps = defineQuery('players.v1.admin_list_apps', z.object({}), z.object({ apps: z.array(AdminAppSummarySchema) }), {
  callers: ['admin'],
});
