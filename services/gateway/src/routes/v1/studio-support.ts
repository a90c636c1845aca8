import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminFindPlayer, AdminGrantChests, AdminLockPlayer, AdminRevokeSessions, AdminSearchPlayers, paginationLinks } from '@ccs/shared';
import { z } from 'zod';
import { baseUrl, jsonApiQuery, parseBody, sendDocument, uuidParam } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/studio-support.js';
import { allowEmptyJsonApiBody } from './players/optional-body.js';
import { studioCall } from './studio-call.js';
import { ActionMeta, NoteOnlyBody } from './studio-note.js';
import {
  type AdminPlayerListDocument,
  playerList,
  studioChestGrantDocument,
  sessionsRevokedDocument,
  playerLockDocument,
} from '../../resources/studio-support.js';

/**
 * The support desk's admin routes (docs/operations.md, "Admin API"; the console's player pages):
 * finding players (the newest, or by the start of their email, which a search sends in its body
 * so that it is never in a URL), granting chests, ending a player's sessions, locking and
 * unlocking a player. Registered in the studio scope by studioRoutes: each action is recorded in
 * the audit log with its `meta.note`; the reads are not.
 */

/** Pages of players: 20 by default, at most 100. */
const PLAYERS_QUERY = { page: { defaultLimit: 20, maxLimit: 100 } };

/** POST /players/search body: the start of the email to look for. */
export const PlayerSearchBody = z
  .object({
    data: z.object({
      type: z.literal('player_search', { error: 'data.type must be "player_search".' }),
      attributes: z
        .object({
          email_prefix: z
            .string({ error: 'email_prefix is required: the start of the email, 1 to 320 characters.' })
            .trim()
            .min(1, { error: 'email_prefix must not be empty: the start of the email, 1 to 320 characters.' })
            .max(320, { error: 'email_prefix is at most 320 characters.' })
            .describe('The start of the email, in any case (e.g. `ada@` or `Ada.Love`).'),
        })
        .strict(),
    }),
  })
  .strict();

/** POST /players/{id}/chests body: which chests, how many, and the grant's reference. */
export const StudioChestGrantBody = z.object({
  data: z.object({
    type: z.literal('chest_grant', { error: 'data.type must be "chest_grant".' }),
    attributes: z
      .object({
        chest_type: z
          .string({ error: 'chest_type is required: the chest\'s slug (e.g. "silver-chest") or its catalog id.' })
          .regex(/^[A-Za-z0-9-]{1,64}$/, { error: 'chest_type must be a chest\'s slug (e.g. "silver-chest") or its catalog id.' })
          .describe('The chest type: its slug in the content (e.g. `silver-chest`) or its catalog id (the `id` of `GET /api/v1/chests`).'),
        quantity: z
          .number({ error: 'quantity must be a whole number from 1 to 100.' })
          .int({ error: 'quantity must be a whole number.' })
          .min(1, { error: 'quantity must be at least 1.' })
          .max(100, { error: 'quantity must be at most 100.' })
          .default(1)
          .describe('How many chests (1 to 100, default 1).'),
        reference: z
          .string({ error: "reference is required: the studio's id of this grant, 1 to 100 printable ASCII characters without spaces." })
          .regex(/^[\x21-\x7e]{1,100}$/, {
            error: "reference must be the studio's id of this grant, 1 to 100 printable ASCII characters without spaces.",
          })
          .describe("The studio's id of this grant (an incident or event id): granting again under it adds nothing."),
      })
      .strict(),
  }),
  meta: ActionMeta,
});

/** GET /api/v1/admin/players: the app's players, the newest first. */
async function newestPlayers(request: FastifyRequest, reply: FastifyReply) {
  const q = jsonApiQuery(request, PLAYERS_QUERY);
  const r = await request.server.bus.request(AdminSearchPlayers, { appId: request.tenant!.appId, page: q.page }, studioCall(request));
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: playerList(r),
    meta: { total_count: r.total, page: q.page },
    links: paginationLinks(baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL), '/api/v1/admin/players', rest, q.page, r.total),
  } satisfies AdminPlayerListDocument);
}

/** POST /api/v1/admin/players/search: the players whose email starts with the body's prefix, in any case. */
async function searchPlayers(request: FastifyRequest, reply: FastifyReply) {
  const q = jsonApiQuery(request, PLAYERS_QUERY);
  const prefix = parseBody(PlayerSearchBody, request.body).data.attributes.email_prefix;
  const r = await request.server.bus.request(
    AdminSearchPlayers,
    { appId: request.tenant!.appId, emailPrefix: prefix, page: q.page },
    studioCall(request),
  );
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, { data: playerList(r), meta: { total_count: r.total, page: q.page } } satisfies AdminPlayerListDocument);
}

/** POST /api/v1/admin/players/{id}/chests: chests for a player, once per reference. */
async function grantChests(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const playerId = uuidParam(request, 'id');
  const a = parseBody(StudioChestGrantBody, request.body).data.attributes;
  const appId = request.tenant!.appId;
  // Another app's player (or none) is not found: chests itself knows no players.
  await request.server.bus.request(AdminFindPlayer, { appId, playerId }, studioCall(request));
  const r = await request.server.bus.request(
    AdminGrantChests,
    { appId, playerId, chestTypeId: a.chest_type, quantity: a.quantity, reference: a.reference },
    studioCall(request),
  );
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, r.replayed ? 200 : 201, studioChestGrantDocument(r, a.reference));
}

/** The note-only body of an action that needs none (checked when sent: 422 for anything else). */
function noteOnly(request: FastifyRequest): void {
  if (request.body !== undefined) parseBody(NoteOnlyBody, request.body);
}

/** POST /api/v1/admin/players/{id}/sessions/revoke: every session of the player ended. */
async function revokeSessions(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const playerId = uuidParam(request, 'id');
  noteOnly(request);
  const r = await request.server.bus.request(AdminRevokeSessions, { appId: request.tenant!.appId, playerId }, studioCall(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, sessionsRevokedDocument(r));
}

/** POST /api/v1/admin/players/{id}/lock and /unlock: answered once every gateway has been told. */
const setLock = (locked: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
  jsonApiQuery(request, NO_QUERY);
  const playerId = uuidParam(request, 'id');
  noteOnly(request);
  const r = await request.server.bus.request(AdminLockPlayer, { appId: request.tenant!.appId, playerId, locked }, studioCall(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, playerLockDocument(r));
};

/** Registers the support desk's routes in the studio scope (called by studioRoutes, so they share its audit hook). */
export async function studioSupportRoutes(app: FastifyInstance) {
  app.get('/api/v1/admin/players', { config: { openapi: documented(docs.adminListPlayers, { query: PLAYERS_QUERY }) } }, newestPlayers);
  app.post(
    '/api/v1/admin/players/search',
    {
      config: {
        bodyType: 'jsonapi',
        audited: false,
        openapi: documented(docs.adminSearchPlayers, { query: PLAYERS_QUERY, body: { schema: PlayerSearchBody, required: true } }),
      },
    },
    searchPlayers,
  );
  app.post(
    '/api/v1/admin/players/:id/chests',
    {
      config: {
        bodyType: 'jsonapi',
        openapi: documented(docs.adminGrantChests, { query: NO_QUERY, body: { schema: StudioChestGrantBody, required: true } }),
      },
    },
    grantChests,
  );
  // The body is optional: none, an empty one, or `{"meta": {"note": "…"}}` with the JSON:API media type.
  await app.register(async (noteOnlyRoutes) => {
    allowEmptyJsonApiBody(noteOnlyRoutes);
    const body = { schema: NoteOnlyBody, required: false };
    noteOnlyRoutes.post(
      '/api/v1/admin/players/:id/sessions/revoke',
      { config: { openapi: documented(docs.adminRevokeSessions, { query: NO_QUERY, body }) } },
      revokeSessions,
    );
    noteOnlyRoutes.post(
      '/api/v1/admin/players/:id/lock',
      { config: { openapi: documented(docs.adminLockPlayer, { query: NO_QUERY, body }) } },
      setLock(true),
    );
    noteOnlyRoutes.post(
      '/api/v1/admin/players/:id/unlock',
      { config: { openapi: documented(docs.adminUnlockPlayer, { query: NO_QUERY, body }) } },
      setLock(false),
    );
  });
}
