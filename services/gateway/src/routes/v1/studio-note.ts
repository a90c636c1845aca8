import { z } from 'zod';

/**
 * The note of an admin action (docs/operations.md, "Admin API"): `meta.note` of the request's
 * body, what the person who acted writes about it (a ticket number, the reason). The audit log
 * keeps it with the action; the console asks for one on every action.
 */

/** The longest note kept. */
export const NOTE_MAX_LENGTH = 500;

/** The top-level `meta` of an action's body: the note. */
const NoteMeta = z
  .object({
    note: z
      .string({ error: `meta.note must be text of 1 to ${NOTE_MAX_LENGTH} characters.` })
      .trim()
      .min(1, { error: `meta.note must be text of 1 to ${NOTE_MAX_LENGTH} characters.` })
      .max(NOTE_MAX_LENGTH, { error: `meta.note is at most ${NOTE_MAX_LENGTH} characters.` })
      .describe('Why this is done (a ticket number, the reason), kept with the action in the audit log.'),
  })
  .strict();

/** The top-level `meta` an action's body may carry beside its `data`. */
export const ActionMeta = NoteMeta.optional().describe('Optional: `note`, kept with the action in the audit log.');

/** The body of an action that takes nothing but its note: `{"meta": {"note": "…"}}` (or, the route allowing it, no body at all). */
export const NoteOnlyBody = z.object({ meta: NoteMeta }).strict();

/** The `meta.note` of a request's body, when it is text (already checked by the route, or refused with it): trimmed, at most NOTE_MAX_LENGTH. */
export function noteOf(body: unknown): string | null {
  const meta = typeof body === 'object' && body !== null ? (body as { meta?: unknown }).meta : undefined;
  const note = typeof meta === 'object' && meta !== null ? (meta as { note?: unknown }).note : undefined;
  if (typeof note !== 'string' || !note.trim()) return null;
  return note.trim().slice(0, NOTE_MAX_LENGTH);
}
