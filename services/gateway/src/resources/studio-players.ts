import { z } from 'zod';
import { UuidSchema, type ReplyOf, AdminUpdatePlayerProfile } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { ResourceLinks, Timestamp } from './jsonapi.js';
import { selfLinks } from '../routes/v1/resource-links.js';

/** Response schema of the studio's changes of a player's declared profile (the admin API). */

/** A player's declared profile after the studio changed it. */
export const StudioPlayerProfileDocument = component(
  'StudioPlayerProfileDocument',
  'The player\'s declared country and birth year after the studio\'s change (docs/content.md, "A declared profile").',
  z.object({
    data: z.object({
      type: z.literal('player'),
      id: UuidSchema,
      attributes: z.object({
        country: z.string().nullable().describe('ISO 3166-1 alpha-2, upper case; null when not declared.'),
        birth_year: z.number().int().nullable().describe('Null when not declared.'),
        country_changed_at: Timestamp.nullable().describe(
          "When the player last changed a declared country themselves (the cooldown counts from it); null when never. The studio's changes do not set it.",
        ),
      }),
      links: ResourceLinks.describe('`self`: `/api/v1/admin/players/{id}`.'),
    }),
  }),
);

/** What `StudioPlayerProfileDocument` describes, as the gateway renders it. */
export type StudioPlayerProfileDocument = z.output<typeof StudioPlayerProfileDocument>;

/** A player's declared profile after the studio's correction. */
export function studioPlayerProfileDocument(r: ReplyOf<typeof AdminUpdatePlayerProfile>, base: string): z.output<typeof StudioPlayerProfileDocument> {
  return {
    data: {
      type: 'player',
      id: r.playerId,
      attributes: { country: r.country, birth_year: r.birthYear, country_changed_at: r.countryChangedAt },
      links: selfLinks.adminPlayer(base, r.playerId),
    },
  };
}
