import { z } from 'zod';
import type { AuditEntry } from '@ccs/shared';
import { component } from '../openapi/components.js';
import { Count, PageMeta, PaginationLinks, Timestamp } from './jsonapi.js';

/** Response schema of the admin audit log (`GET /api/v1/admin/audit`), with its renderer typed by it. */

/** The audit log. */
export const AuditLogDocument = component(
  'AuditLogDocument',
  "The app's admin audit log, newest first: every action of the admin API (every call but its reads), who made it, on what, when, how it ended and the note given with it.",
  z.object({
    data: z.array(
      z.object({
        type: z.literal('audit_entry'),
        id: z.string().describe('The request id of the call.'),
        attributes: z.object({
          at: Timestamp,
          actor: z.string().describe('The credential: `secret key …<last 4 characters>`.'),
          action: z.string().describe('The operation, e.g. `POST /api/v1/admin/players/{id}/lock`.'),
          target: z.string().nullable().describe('What it was about (a player id or email), when it names something.'),
          status: z.number().int(),
          note: z
            .string()
            .nullable()
            .describe("The note the action's body gave (`meta.note`; the console asks for one on every action); null when none."),
        }),
      }),
    ),
    meta: z.object({ total_count: Count, page: PageMeta }),
    links: PaginationLinks,
  }),
);

/** What `AuditLogDocument` describes, as the gateway renders it. */
export type AuditLogDocument = z.output<typeof AuditLogDocument>;

/** One entry of the app's audit log. */
export const auditEntry = (e: AuditEntry): AuditLogDocument['data'][number] => ({
  type: 'audit_entry',
  id: e.requestId,
  attributes: { at: e.at, actor: e.actor, action: e.action, target: e.target, status: e.status, note: e.note },
});
