import { z } from 'zod';
import { AdminPlayerDocument, AppOverviewDocument, AuditLogDocument } from '../schemas/studio.js';
import type { OperationDoc } from '../route-doc.js';
import { NO_STORE_HEADER } from './common.js';

/** Documentation of the admin API: the studio's tools, with the app's secret key (docs/operations.md, "Admin API"). */

const SECRET_KEY_ONLY = {
  401: ['a Bearer token sent along: the admin API takes the secret key only (`token_not_accepted`)'],
  403: ['a publishable key: the admin API needs the secret key (`secret_key_required`)'],
};

/** GET /api/v1/admin/overview. */
export const adminOverview: OperationDoc = {
  operationId: 'adminOverview',
  tag: 'Admin',
  summary: 'The app at a glance',
  description:
    "For the studio's tools, with the app's secret key in `apikey`: players, chests, openings of the last 24 hours, purchases, granted items, balances per currency, and the content version each service has applied. Recorded in the audit log. Never cached.",
  token: 'none',
  responses: [{ status: 200, description: 'The overview.', schema: AppOverviewDocument, headers: NO_STORE_HEADER }],
  errors: SECRET_KEY_ONLY,
};

/** GET /api/v1/admin/players/{id}. */
export const adminGetPlayer: OperationDoc = {
  operationId: 'adminGetPlayer',
  tag: 'Admin',
  summary: 'Look up a player',
  description:
    "A player of the secret key's app, by id or by email (any case): profile, unopened chests (newest 100), balances, collection progress and the latest 20 openings with their items. Another app's player is not found. Recorded in the audit log. Never cached.",
  token: 'none',
  params: { id: { schema: z.string().min(1).max(320), description: 'A player id (UUID) or an email address.', example: 'ada@example.com' } },
  responses: [{ status: 200, description: 'The player.', schema: AdminPlayerDocument, headers: NO_STORE_HEADER }],
  errors: { ...SECRET_KEY_ONLY, 404: ['no such player in this app (`player_not_found`)'] },
};

/** GET /api/v1/admin/audit. */
export const adminListAudit: OperationDoc = {
  operationId: 'adminListAudit',
  tag: 'Admin',
  summary: 'The audit log',
  description:
    "Every call of the admin API for the secret key's app, newest first: who (which secret key), what, on what, when and its status. Never cached.",
  token: 'none',
  responses: [{ status: 200, description: 'A page of the audit log.', schema: AuditLogDocument, headers: NO_STORE_HEADER }],
  errors: SECRET_KEY_ONLY,
};
