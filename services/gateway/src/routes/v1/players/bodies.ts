import { PrivacySchema } from '@ccs/shared';
import { z } from 'zod';

// Generous bounds at the edge; the players service applies the real rules (422 per rule).
const text = z.string().max(1000);

/** A JSON:API request document whose primary data is a resource of `type` with these attributes. */
function document<A extends z.ZodType>(type: string, attributes: A) {
  return z.object({
    data: z.object({
      type: z.literal(type),
      attributes,
      relationships: z.record(z.string(), z.unknown()).optional(),
    }),
  });
}

/**
 * The compliance attributes a player may declare (docs/content.md, "Compliance"): their shape
 * here; the players service checks the country against the assigned ISO codes and the year
 * against the current one (422 `country_invalid`, `birth_year_invalid`).
 */
const complianceAttributes = {
  country: z
    .string()
    .regex(/^[A-Za-z]{2}$/, 'country must be an ISO 3166-1 alpha-2 code, such as DE.')
    .optional()
    .describe('ISO 3166-1 alpha-2 code of the country the player lives in, either case (stored upper case), e.g. `DE`.'),
  birth_year: z
    .number()
    .int()
    .min(1900)
    .optional()
    .describe('Year of birth, from 1900 to the current year. Once set it cannot be changed (`birth_year_locked`).'),
};

/** POST /players/register: the spec's shape, `relationships` an (optional) empty object; country and birth year optional. */
export const RegisterBody = document('player', z.object({ email: text, password: text, password_confirmation: text, ...complianceAttributes }));

/** POST /players/login. */
export const LoginBody = document('player', z.object({ email: text, password: text }));

/** POST /players/refresh. */
export const RefreshBody = document('session', z.object({ refresh_token: text.min(1) }));

/** POST /players/logout: an optional body naming a refresh token whose family ends too. */
export const LogoutBody = document('session', z.object({ refresh_token: text.min(1).optional() }));

/** PATCH /players/me: `privacy`, `country` and `birth_year` can change (at least one); any other attribute is refused. */
export const UpdateMeBody = z.object({
  data: z.object({
    type: z.literal('player'),
    id: z.string().uuid().optional(),
    attributes: z
      .object({ privacy: PrivacySchema.optional(), ...complianceAttributes })
      .strict()
      // Only for an otherwise valid object: an unknown member alone is one error, not two.
      .refine((a) => Object.keys(a).length > 0, {
        message: 'Give at least one of privacy, country, birth_year.',
        when: (payload) => payload.issues.length === 0,
      }),
    relationships: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** POST /players/me/friends: the player to befriend, as a resource identifier. */
export const FriendRequestBody = z.object({ data: z.object({ type: z.literal('player'), id: z.string().uuid() }) });
