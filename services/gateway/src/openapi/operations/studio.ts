import { z } from 'zod';
import { AdminPlayerDocument } from '../../resources/studio-player-view.js';
import { AppOverviewDocument } from '../../resources/studio-overview.js';
import { AuditLogDocument } from '../../resources/studio-audit.js';
import { ContentDiffDocument, ContentLoadedDocument, ContentVersionsDocument } from '../../resources/studio-content.js';
import { ChestDropsDocument, SimulationDocument } from '../../resources/studio-chest-odds.js';
import type { OperationDoc } from '../route-doc.js';
import { NO_STORE_HEADER } from './common.js';

/** Documentation of the admin API: the studio's tools, with the app's secret key (docs/operations.md, "Admin API"). */

export const SECRET_KEY_ONLY = {
  401: ['a Bearer token sent along: the admin API takes the secret key only (`token_not_accepted`)'],
  403: ['a publishable key: the admin API needs the secret key (`secret_key_required`)'],
};

/** GET /api/v1/admin/overview. */
export const adminOverview: OperationDoc = {
  operationId: 'adminOverview',
  tag: 'Admin',
  summary: 'The app at a glance',
  description:
    "For the studio's tools, with the app's secret key in `apikey`: players, chests, openings of the last 24 hours (and hour by hour with completed purchases), purchases, granted items, balances and the sources and sinks of each currency over the last 24 hours, and the content version each service has applied. A read: not recorded in the audit log. Never cached.",
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
    "A player of the secret key's app, by id or by email (any case): profile, the declared country and birth year with what the compliance rules assume for what is missing, the studio's lock, sessions (newest 20), unopened chests (newest 100) and mailbox, balances with the latest 50 ledger rows, purchases, keys and timer skips (newest 20), collection progress and the latest 20 openings with their items. Another app's player is not found. A read: not recorded in the audit log. Never cached.",
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
    "Every action of the admin API for the secret key's app (every call but the reads: GETs, a player search, a simulation), newest first: who (which secret key), what, on what, when, its status and the note its body gave (`meta.note`). A read: not recorded itself. Never cached.",
  token: 'none',
  responses: [{ status: 200, description: 'A page of the audit log.', schema: AuditLogDocument, headers: NO_STORE_HEADER }],
  errors: SECRET_KEY_ONLY,
};

/** GET /api/v1/admin/content. */
export const adminListContentVersions: OperationDoc = {
  operationId: 'adminListContentVersions',
  tag: 'Admin',
  summary: "The app's content versions",
  description:
    'Every content version loaded since versions are kept, newest first, with its size and which is current. A read: not recorded in the audit log. Never cached.',
  token: 'none',
  responses: [{ status: 200, description: 'The versions.', schema: ContentVersionsDocument, headers: NO_STORE_HEADER }],
  errors: SECRET_KEY_ONLY,
};

/** GET /api/v1/admin/content/{version}/diff. */
export const adminContentDiff: OperationDoc = {
  operationId: 'adminContentDiff',
  tag: 'Admin',
  summary: 'What the current content changed from a version',
  description:
    'Section by section (currencies, rarities, collections, collectibles, chests, player rules, duplicate rules, compliance, banners, store products, store settings): the ids added, removed and changed from `version` to the current content, and what changed in each changed one (`changed_fields`). A read: not recorded in the audit log. Never cached.',
  token: 'none',
  params: { version: { schema: z.string().min(1).max(200), description: 'A content version number.', example: '1' } },
  responses: [{ status: 200, description: 'The differences (none when the same).', schema: ContentDiffDocument, headers: NO_STORE_HEADER }],
  errors: { ...SECRET_KEY_ONLY, 404: ['no stored content of that version, or not a version number (`content_version_not_found`)'] },
};

/** POST /api/v1/admin/content. */
export const adminLoadContent: OperationDoc = {
  operationId: 'adminLoadContent',
  tag: 'Admin',
  summary: 'Load a content file',
  description:
    "Validates a content file (docs/content.md; plain JSON, up to the gateway's body limit) and loads it as the app's next version; every service applies it within moments. A file that does not validate is refused with one 422 error per problem, pointing at it, and nothing changes. Recorded in the audit log.",
  token: 'none',
  responses: [{ status: 201, description: 'Loaded as the next version.', schema: ContentLoadedDocument, headers: NO_STORE_HEADER }],
  errors: {
    ...SECRET_KEY_ONLY,
    422: [
      'the content file does not validate (`invalid_field`, and `complete_gacha` with `meta.collection` and `meta.collectibles` when `compliance.forbid_complete_gacha` refuses a rewarded set of paid random items; `source.pointer` at each problem)',
    ],
  },
};

/** POST /api/v1/admin/chests/{id}/simulation. */
export const adminSimulate: OperationDoc = {
  operationId: 'adminSimulate',
  tag: 'Admin',
  summary: "Simulate a chest's odds",
  description:
    'Opens the chest `opens` times (default 10,000, at most 100,000) with the production roll and pity code on its current rules, the pity counter carried from opening to opening, and answers the observed share of each rarity against the disclosed long-run share, a chi-square p-value and what pity did (docs/content.md, "Odds simulator"). With `seed` (hex) the run is reproducible. The chest is named by its catalog id or its slug. Nothing is opened or recorded, not even in the audit log (a read). The public odds of a chest are GET /api/v1/chests/{id}/odds.\n\nThe chests service (the owner of the drop tables) runs it in a worker thread, off any event loop, and an app has one at a time across every chests replica, running or waiting for its turn: another meanwhile (the simulation of a banner stats call too) is answered 429 `simulation_busy` with `Retry-After`. Each chests process runs at most `SIMULATION_MAX_CONCURRENT` at once (default: its CPUs less one, at least 1); the others wait up to `SIMULATION_QUEUE_WAIT_MS` (10 s) for a turn, then 503 `overloaded`, and past `SIMULATION_MAX_QUEUED` (8) waiting, 503 `overloaded` at once. A run longer than `SIMULATION_TIMEOUT_MS` (60 s) is stopped: 503 `simulation_timeout`.',
  token: 'none',
  params: {
    id: { schema: z.string().min(1).max(200), description: "A catalog chest id or its slug (the content's chest id).", example: 'silver-chest' },
  },
  bodyExample: { data: { type: 'simulation', attributes: { opens: 10000, seed: 'c0ffee' } } },
  responses: [{ status: 200, description: 'The run.', schema: SimulationDocument, headers: NO_STORE_HEADER }],
  errors: {
    ...SECRET_KEY_ONLY,
    404: ['no such chest in this app (`chest_not_found`)'],
    422: ['`opens` out of 1 to 100,000, or a `seed` that is not hex bytes'],
    429: [
      'a simulation of this app (or of one of its banners, for its stats) is already running or waiting for its turn, on this or another chests replica (`simulation_busy`): nothing done; retry after `Retry-After` seconds (also in `meta.retry_after_seconds`)',
    ],
    503: [
      'the chests replica already runs `SIMULATION_MAX_CONCURRENT` simulations and none ended within `SIMULATION_QUEUE_WAIT_MS`, or `SIMULATION_MAX_QUEUED` wait already (`overloaded`, with `Retry-After`)',
      'the run took longer than `SIMULATION_TIMEOUT_MS` and was stopped (`simulation_timeout`)',
      'Postgres, which holds the per-app lock, or the chests service is not reachable (`service_unavailable`)',
    ],
  },
};

/** GET /api/v1/admin/chests/{id}/drops. */
export const adminChestDrops: OperationDoc = {
  operationId: 'adminChestDrops',
  tag: 'Admin',
  summary: "A chest's observed drops against its disclosed odds",
  description:
    "What the app's real openings of the chest drew (those kept, OPENINGS_RETENTION_DAYS), item by item per rarity, against the disclosed long-run share of each rarity under the chest's current rules (pity included), with a chi-square p-value (null before any opening). Openings made under earlier rules count too: after a rules change, compare with care. The chest is named by its catalog id or its slug. A read: not recorded in the audit log. Never cached.",
  token: 'none',
  params: {
    id: { schema: z.string().min(1).max(200), description: "A catalog chest id or its slug (the content's chest id).", example: 'silver-chest' },
  },
  responses: [{ status: 200, description: 'The drops.', schema: ChestDropsDocument, headers: NO_STORE_HEADER }],
  errors: { ...SECRET_KEY_ONLY, 404: ['no such chest in this app (`chest_not_found`)'] },
};
