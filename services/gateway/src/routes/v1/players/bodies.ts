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

/** POST /players/register: the spec's shape, `relationships` an (optional) empty object. */
export const RegisterBody = document('player', z.object({ email: text, password: text, password_confirmation: text }));

/** POST /players/login. */
export const LoginBody = document('player', z.object({ email: text, password: text }));

/** POST /players/refresh. */
export const RefreshBody = document('session', z.object({ refresh_token: text.min(1) }));

/** POST /players/logout: an optional body naming a refresh token whose family ends too. */
export const LogoutBody = document('session', z.object({ refresh_token: text.min(1).optional() }));

/** PATCH /players/me: only `privacy` can change; any other attribute is refused. */
export const UpdateMeBody = z.object({
  data: z.object({
    type: z.literal('player'),
    id: z.string().uuid().optional(),
    attributes: z.object({ privacy: PrivacySchema }).strict(),
    relationships: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** POST /players/me/friends: the player to befriend, as a resource identifier. */
export const FriendRequestBody = z.object({ data: z.object({ type: z.literal('player'), id: z.string().uuid() }) });
