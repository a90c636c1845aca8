import { z } from 'zod';
import { UuidSchema } from './context.js';
import { defineQuery, defineSubject } from './subject.js';

// The admin API's audit log: recorded by the gateway, listed by an operator.

/** One entry of the admin API's audit log: who did what, to what, when, and how it ended. */
export const AuditEntrySchema = z.object({
  at: z.string(),
  /** Which credential: `secret key …<last 4 characters>`. */
  actor: z.string(),
  /** The operation, e.g. `POST /api/v1/admin/players/{id}/lock`. */
  action: z.string(),
  /** What it was about (a player id or email), when it names something. */
  target: z.string().nullable(),
  status: z.number().int(),
  requestId: z.string(),
  /** What the person who acted wrote about it (the console's note on an action, the API's `meta.note`); null when none. */
  note: z.string().max(1000).nullable(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** players: records one admin API call that acted (every one but the reads) in the app's audit log: the gateway, after answering it. */
export const AdminRecordAudit = defineSubject(
  'players.v1.admin_record_audit',
  AuditEntrySchema.omit({ at: true }).extend({ appId: UuidSchema }),
  z.object({}),
  { callers: ['gateway'] },
);

/** players: the app's audit log, newest first. */
export const AdminListAudit = defineQuery(
  'players.v1.admin_list_audit',
  z.object({ appId: UuidSchema, page: z.object({ limit: z.number().int().min(1).max(100), offset: z.number().int().min(0) }) }),
  z.object({ entries: z.array(AuditEntrySchema), total: z.number().int().min(0) }),
  { callers: ['gateway', 'admin'] },
);
