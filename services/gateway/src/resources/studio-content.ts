import { z } from 'zod';
import { ContentSectionSchema, type ReplyOf, AdminListContentVersions, AdminContentDiff, AdminLoadContent } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, Timestamp } from './jsonapi.js';

/** Response schemas of the admin API's content versions, diff and load, with their renderers typed by them. */

/** The app's content versions. */
export const ContentVersionsDocument = component(
  'ContentVersionsDocument',
  "The app's stored content versions, newest first; `meta.current_version` is the one the services apply.",
  z.object({
    data: z.array(
      z.object({
        type: z.literal('content_version'),
        id: z.string(),
        attributes: z.object({
          version: z.number().int(),
          loaded_at: Timestamp,
          current: z.boolean(),
          counts: z.object({ currencies: Count, rarities: Count, collections: Count, collectibles: Count, chests: Count }),
        }),
      }),
    ),
    meta: z.object({ current_version: z.number().int() }),
  }),
);

/** What `ContentVersionsDocument` describes, as the gateway renders it. */
export type ContentVersionsDocument = z.output<typeof ContentVersionsDocument>;

const Ids = z.array(z.string());

/** The differences between a version and the current content. */
export const ContentDiffDocument = component(
  'ContentDiffDocument',
  'What changed from `from_version` to the current content, per section; sections without a change are left out.',
  z.object({
    data: z.object({
      type: z.literal('content_diff'),
      id: z.string(),
      attributes: z.object({
        from_version: z.number().int(),
        to_version: z.number().int(),
        sections: z.array(
          z.object({
            section: ContentSectionSchema.describe(
              "`store_products`: the store's products by id; `store`: its settings `apple`, `google` and `refunds`; `players`, `duplicates`, `compliance` and `trading` are one item each, `(rules)`.",
            ),
            added: Ids,
            removed: Ids,
            changed: Ids,
            changed_fields: z
              .record(z.string(), z.array(z.string()))
              .describe(
                'For each changed id, the paths of what changed in it, dotted down to three levels (`price.coins`, `grants.currencies.gems`, `notifications.audience`); a list is one path.',
              ),
          }),
        ),
      }),
    }),
  }),
);

/** What `ContentDiffDocument` describes, as the gateway renders it. */
export type ContentDiffDocument = z.output<typeof ContentDiffDocument>;

/** A content file loaded. */
export const ContentLoadedDocument = component(
  'ContentLoadedDocument',
  'The content version the file was loaded as.',
  z.object({
    data: z.object({
      type: z.literal('content_version'),
      id: z.string(),
      attributes: z.object({ version: z.number().int(), current: z.literal(true) }),
    }),
    meta: z.object({ message: z.string() }),
  }),
);

/** What `ContentLoadedDocument` describes, as the gateway renders it. */
export type ContentLoadedDocument = z.output<typeof ContentLoadedDocument>;

/** The app's stored content versions, newest first. */
export function contentVersionsDocument(r: ReplyOf<typeof AdminListContentVersions>): z.output<typeof ContentVersionsDocument> {
  return {
    data: r.versions.map((v) => ({
      type: 'content_version',
      id: String(v.version),
      attributes: { version: v.version, loaded_at: v.loadedAt, current: v.version === r.current, counts: v.counts },
    })),
    meta: { current_version: r.current },
  };
}

/** What the current content changed from a stored version, section by section. */
export function contentDiffDocument(d: ReplyOf<typeof AdminContentDiff>): z.output<typeof ContentDiffDocument> {
  return {
    data: {
      type: 'content_diff',
      id: `${d.fromVersion}..${d.toVersion}`,
      attributes: {
        from_version: d.fromVersion,
        to_version: d.toVersion,
        sections: d.sections.map((s) => ({
          section: s.section,
          added: s.added,
          removed: s.removed,
          changed: s.changed,
          changed_fields: s.changedFields,
        })),
      },
    },
  };
}

/** A content file loaded as the app's next version. */
export function contentLoadedDocument(r: ReplyOf<typeof AdminLoadContent>): z.output<typeof ContentLoadedDocument> {
  return {
    data: { type: 'content_version', id: String(r.version), attributes: { version: r.version, current: true } },
    meta: {
      message: `Content version ${r.version} loaded; each service applies it within moments (GET /api/v1/admin/overview shows their versions).`,
    },
  };
}
