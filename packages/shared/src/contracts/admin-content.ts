import { z } from 'zod';
import { UuidSchema } from './context.js';
import { defineQuery } from './subject.js';

// Operator subjects about an app's content: the version each service applied, stored versions, diffs.

/** The services that apply an app's content from the AppContentLoaded message. */
export const CONTENT_SERVICES = ['wallet', 'chests', 'collections'] as const;

/** The content version of an app a service has applied (cheap: for polling after a load). */
export const adminContentVersion = (service: string) =>
  defineQuery(
    `${service}.v1.admin_content_version`,
    z.object({ appId: UuidSchema }),
    z.object({ service: z.string(), contentVersion: z.number().int().nullable() }),
    { callers: ['admin'] },
  );

/** players: the app's stored content versions, newest first (versions loaded before storage began are absent). */
export const AdminListContentVersions = defineQuery(
  'players.v1.admin_content_versions',
  z.object({ appId: UuidSchema }),
  z.object({
    current: z.number().int().min(1),
    versions: z.array(
      z.object({
        version: z.number().int().min(1),
        loadedAt: z.string(),
        counts: z.object({
          currencies: z.number().int(),
          rarities: z.number().int(),
          collections: z.number().int(),
          collectibles: z.number().int(),
          chests: z.number().int(),
        }),
      }),
    ),
  }),
  { callers: ['gateway', 'admin'] },
);

/** The sections of a content file a diff compares. */
export const ContentSectionSchema = z.enum([
  'currencies',
  'rarities',
  'collections',
  'collectibles',
  'chests',
  'players',
  'duplicates',
  'compliance',
  'banners',
  'store_products',
  'store',
  'trading',
]);

/**
 * What changed in one section of a content file between two versions: ids (`(rules)` for a
 * section that is one item) added, removed and changed, and for each changed one the paths of
 * what changed in it (`price.coins`, `grants.currencies.gems`; a list as a whole).
 */
export const ContentSectionDiffSchema = z.object({
  section: ContentSectionSchema,
  added: z.array(z.string()),
  removed: z.array(z.string()),
  changed: z.array(z.string()),
  changedFields: z.record(z.string(), z.array(z.string())),
});
export type ContentSectionDiff = z.infer<typeof ContentSectionDiffSchema>;

/**
 * players: what the app's current content changed from a stored version, section by section
 * (sections without a change left out); 404 content_version_not_found when either version is not stored.
 */
export const AdminContentDiff = defineQuery(
  'players.v1.admin_content_diff',
  z.object({ appId: UuidSchema, version: z.number().int().min(1) }),
  z.object({ fromVersion: z.number().int().min(1), toVersion: z.number().int().min(1), sections: z.array(ContentSectionDiffSchema) }),
  { callers: ['gateway'] },
);
