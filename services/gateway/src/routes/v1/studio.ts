import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  AdminChestDrops,
  AdminPlayerLedger,
  AdminChestsStats,
  AdminCollectionsStats,
  AdminDropInputs,
  AdminFindPlayer,
  AdminContentDiff,
  AdminListAudit,
  AdminListContentVersions,
  AdminLoadContent,
  AppContentSchema,
  AdminListOpenings,
  AdminPlayersStats,
  AdminRecordAudit,
  AdminWalletStats,
  AppError,
  GetBalances,
  GetInventory,
  GetPlayerCollection,
  UuidSchema,
  type CallContext,
} from '@ccs/shared';
import { z } from 'zod';
import { baseUrl, jsonApiQuery, parseBody, sendDocument } from '../../lib/http.js';
import { paginationLinks } from '@ccs/shared';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/studio.js';
import { webhookRoutes } from './studio-webhooks.js';
import { studioPlayerRoutes } from './studio-players.js';
import { studioCreditRoutes } from './studio-credits.js';

/**
 * The admin API (docs/operations.md, "Admin API"): what a studio's tools read, with the app's
 * secret key. Registered in the studio scope (plugins/scopes.ts), so the app is always the secret
 * key's own: another app's data cannot be named. Every call is recorded in the app's audit log.
 */

const AUDIT_QUERY = { page: { defaultLimit: 20, maxLimit: 100 } };

/** The call context of the admin API: the key's app, no player (a player's reads set it explicitly). */
const studioCall = (request: FastifyRequest, playerId?: string): CallContext => ({ requestId: request.id, appId: request.tenant!.appId, playerId });

/** GET /api/v1/admin/overview: every service's figures of the app, in parallel. */
async function overview(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const appId = request.tenant!.appId;
  const ctx = studioCall(request);
  const bus = request.server.bus;
  const [players, chests, collections, wallet] = await Promise.all([
    bus.request(AdminPlayersStats, { appId }, ctx),
    bus.request(AdminChestsStats, { appId }, ctx),
    bus.request(AdminCollectionsStats, { appId }, ctx),
    bus.request(AdminWalletStats, { appId }, ctx),
  ]);
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: {
      type: 'app_overview',
      id: appId,
      attributes: {
        name: players.app.name,
        created_at: players.app.createdAt,
        players: players.players,
        chests: chests.chests,
        openings_last_24h: chests.openingsLast24h,
        purchases: chests.purchases,
        items_granted: collections.itemsGranted,
        collectors: collections.collectors,
        balances: wallet.balances,
        currency_flows_24h: wallet.flows,
        hourly: chests.hourly,
        content_versions: { chests: chests.contentVersion, collections: collections.contentVersion, wallet: wallet.contentVersion },
      },
    },
  });
}

/** GET /api/v1/admin/players/{id}: one player by id or email, with what support needs. */
async function player(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const who = ((request.params as Record<string, string>).id ?? '').trim();
  // No player id or email is empty, that long, or holds control characters (Postgres text cannot hold NUL).
  const controls = [...who].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);
  if (!who || who.length > 320 || controls) throw AppError.notFound('player_not_found', 'No such player in this app.', { parameter: 'id' });
  const appId = request.tenant!.appId;
  const bus = request.server.bus;
  const found = await bus.request(
    AdminFindPlayer,
    UuidSchema.safeParse(who).success ? { appId, playerId: who } : { appId, email: who },
    studioCall(request),
  );
  const ctx = studioCall(request, found.playerId);
  const [inventory, balances, collection, openings, ledger] = await Promise.all([
    bus.request(GetInventory, { ownerId: found.playerId, page: { limit: 100, offset: 0 }, order: 'desc' }, ctx),
    bus.request(GetBalances, { playerId: found.playerId }, ctx),
    bus.request(GetPlayerCollection, { page: { limit: 1, offset: 0 } }, ctx),
    bus.request(AdminListOpenings, { appId, playerId: found.playerId, page: { limit: 20, offset: 0 } }, ctx),
    bus.request(AdminPlayerLedger, { appId, playerId: found.playerId, limit: 50 }, ctx),
  ]);
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: {
      type: 'player',
      id: found.playerId,
      attributes: {
        email: found.email,
        is_anonymous: found.isAnonymous,
        created_at: found.createdAt,
        inventory: {
          total_chests: inventory.totalChests,
          chests: inventory.chests.map((c) => ({
            id: c.id,
            chest_type_id: c.chestTypeId,
            name: c.name,
            source: c.source,
            acquired_at: c.acquiredAt,
          })),
        },
        balances: balances.balances.map((b) => ({ code: b.code, amount: b.amount })),
        ledger: {
          total: ledger.total,
          latest: ledger.entries.map((e) => ({
            at: e.at,
            currency: e.currency,
            delta: e.delta,
            balance_after: e.balanceAfter,
            reason: e.reason,
            reference: e.reference,
          })),
        },
        collections: collection.collections.map((c) => ({
          id: c.collection.id,
          name: c.collection.name,
          unique_items: c.completeness.uniqueItems,
          total_items: c.completeness.totalItems,
          completed_at: c.completeness.completedAt ?? null,
        })),
        openings: {
          total: openings.total,
          latest: openings.openings.map((o) => ({
            id: o.openingId,
            chest_type_id: o.chestTypeId,
            opened_at: o.openedAt,
            rules_version: o.rulesVersion,
            items: o.items.map((it) => ({ collectible_id: it.collectibleId, rarity: it.rarity })),
          })),
        },
      },
    },
  });
}

/** GET /api/v1/admin/audit: the app's audit log, newest first. */
async function audit(request: FastifyRequest, reply: FastifyReply) {
  const q = jsonApiQuery(request, AUDIT_QUERY);
  const r = await request.server.bus.request(AdminListAudit, { appId: request.tenant!.appId, page: q.page }, studioCall(request));
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: r.entries.map((e) => ({
      type: 'audit_entry',
      id: e.requestId,
      attributes: { at: e.at, actor: e.actor, action: e.action, target: e.target, status: e.status },
    })),
    meta: { total_count: r.total, page: q.page },
    links: paginationLinks(baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL), '/api/v1/admin/audit', rest, q.page, r.total),
  });
}

/** GET /api/v1/admin/content: the app's content versions, newest first. */
async function contentVersions(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const r = await request.server.bus.request(AdminListContentVersions, { appId: request.tenant!.appId }, studioCall(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: r.versions.map((v) => ({
      type: 'content_version',
      id: String(v.version),
      attributes: { version: v.version, loaded_at: v.loadedAt, current: v.version === r.current, counts: v.counts },
    })),
    meta: { current_version: r.current },
  });
}

const VersionSchema = z.coerce.number().int().min(1).max(2_147_483_647);

/** GET /api/v1/admin/content/{version}/diff: what the current content changed from that version (players computes it). */
async function contentDiff(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const raw = (request.params as Record<string, string>).version;
  const parsed = VersionSchema.safeParse(raw);
  if (!parsed.success || !/^\d+$/.test(raw ?? ''))
    // Only a version number can exist; anything else is not found, as an unknown number is.
    throw AppError.notFound('content_version_not_found', 'No stored content of that version.', { parameter: 'version' });
  const d = await request.server.bus.request(AdminContentDiff, { appId: request.tenant!.appId, version: parsed.data }, studioCall(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: {
      type: 'content_diff',
      id: `${d.fromVersion}..${d.toVersion}`,
      attributes: { from_version: d.fromVersion, to_version: d.toVersion, sections: d.sections },
    },
  });
}

/** POST /api/v1/admin/content: validates a content file and loads it as the app's next version. */
async function loadContent(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const content = parseBody(AppContentSchema, request.body);
  const r = await request.server.bus.request(AdminLoadContent, { appId: request.tenant!.appId, content }, studioCall(request), { timeoutMs: 30_000 });
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 201, {
    data: { type: 'content_version', id: String(r.version), attributes: { version: r.version, current: true } },
    meta: {
      message: `Content version ${r.version} loaded; each service applies it within moments (GET /api/v1/admin/overview shows their versions).`,
    },
  });
}

/** The chest of the path, by catalog id or slug (404 chest_not_found for what cannot name one). */
function chestNamed(request: FastifyRequest): { chestTypeId: string } | { slug: string } {
  const id = (request.params as Record<string, string>).id ?? '';
  if (!id || id.length > 200 || [...id].some((ch) => ch.charCodeAt(0) < 0x20))
    throw AppError.notFound('chest_not_found', 'No such chest in this app.', { parameter: 'id' });
  return UuidSchema.safeParse(id).success ? { chestTypeId: id.toLowerCase() } : { slug: id };
}

/** The chest of the path with its current rules, as the simulator rolls them. */
async function chestOf(request: FastifyRequest) {
  return request.server.bus.request(AdminDropInputs, { appId: request.tenant!.appId, ...chestNamed(request) }, studioCall(request));
}

/** The simulation's body: how many openings (default 10,000, at most 100,000) and an optional seed (hex) to make it reproducible. */
const SimulationBody = z.object({
  data: z.object({
    type: z.literal('simulation', { error: 'data.type must be "simulation".' }),
    attributes: z
      .object({
        opens: z.number().int().min(1).max(100_000).default(10_000),
        seed: z
          .string()
          .regex(/^(?:[0-9a-f]{2}){1,64}$/, { error: 'seed takes hex bytes (an even number of 0-9 a-f digits, at most 128)' })
          .optional(),
      })
      .strict()
      .default({ opens: 10_000 }),
  }),
});
/**
 * POST /api/v1/admin/chests/{id}/simulation: the odds simulator (docs/content.md, "Odds
 * simulator") on the chest's current rules: observed against disclosed shares per rarity, a
 * chi-square p-value, and what pity did. The same code rolls real openings. It runs in a worker
 * thread, one per app at a time (429 `simulation_busy` otherwise), bounded (../../simulation).
 */
async function simulation(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const { opens, seed } = parseBody(SimulationBody, request.body).data.attributes;
  const inputs = await chestOf(request);
  const r = await request.server.simulations.run(request.tenant!.appId, {
    rules: inputs.rules,
    rarities: inputs.rarities,
    collectibles: inputs.collectibles,
    opens,
    ...(seed ? { seed } : {}),
  });
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: {
      type: 'simulation',
      id: inputs.chestTypeId,
      attributes: {
        chest: { slug: inputs.slug, name: inputs.name, rules_version: inputs.contentVersion },
        opens: r.opens,
        items: r.items,
        seed: seed ?? null,
        rarities: r.rarities.map((x) => ({ rarity: x.rarity, disclosed: x.effective, observed: x.observed, count: x.count, deviation: x.deviation })),
        chi_square_p_value: { rarities: r.chiSquare.rarities.pValue, collectibles: r.chiSquare.collectibles.pValue },
        pity: r.pity && {
          rarity: r.pity.rarity,
          hard: r.pity.hard,
          hits: r.pity.hits,
          guaranteed: r.pity.guaranteed,
          mean_gap: r.pity.gap.mean,
          expected_mean_gap: r.pity.gap.expectedMean,
        },
      },
    },
  });
}

/**
 * GET /api/v1/admin/chests/{id}/drops: what real openings of the chest drew, per rarity, against
 * the disclosed long-run shares of its current rules, with a chi-square p-value (chests computes them).
 */
async function drops(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const d = await request.server.bus.request(AdminChestDrops, { appId: request.tenant!.appId, ...chestNamed(request) }, studioCall(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: {
      type: 'chest_drops',
      id: d.chestTypeId,
      attributes: {
        chest: { slug: d.chest.slug, name: d.chest.name, rules_version: d.chest.rulesVersion },
        openings: d.openings,
        items: d.items,
        since: d.since,
        rarities: d.rarities.map((r) => ({ rarity: r.rarity, disclosed: r.disclosed, observed: r.observed, count: r.count })),
        chi_square_p_value: d.chiSquarePValue,
      },
    },
  });
}

/** Which credential made a call, as the audit log shows it (never the key itself). */
const actorOf = (request: FastifyRequest) => {
  const key = String(request.headers.apikey ?? '');
  return `${request.tenant?.keyKind ?? 'unknown'} key …${key.slice(-4)}`;
};

/** The admin API's routes (studio scope), each call recorded in the audit log once answered. */
export async function studioRoutes(app: FastifyInstance) {
  app.addHook('onResponse', (request, reply, done) => {
    const appId = request.tenant?.appId;
    if (appId) {
      const target = (request.params as Record<string, string> | undefined)?.id ?? null;
      const entry = {
        appId,
        actor: actorOf(request),
        action: `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`.replace(/:([a-z_]+)/g, '{$1}'),
        target: target ? target.slice(0, 320) : ((request.params as Record<string, string> | undefined)?.version ?? null),
        status: reply.statusCode,
        requestId: request.id,
      };
      app.bus
        .request(AdminRecordAudit, entry, { requestId: request.id, appId })
        .catch((err) => request.log.error({ err: String(err) }, 'admin audit entry not recorded'));
    }
    done();
  });
  app.get('/api/v1/admin/overview', { config: { openapi: documented(docs.adminOverview, { query: NO_QUERY }) } }, overview);
  app.get('/api/v1/admin/players/:id', { config: { openapi: documented(docs.adminGetPlayer, { query: NO_QUERY }) } }, player);
  app.get('/api/v1/admin/audit', { config: { openapi: documented(docs.adminListAudit, { query: AUDIT_QUERY }) } }, audit);
  app.get('/api/v1/admin/content', { config: { openapi: documented(docs.adminListContentVersions, { query: NO_QUERY }) } }, contentVersions);
  app.get('/api/v1/admin/content/:version/diff', { config: { openapi: documented(docs.adminContentDiff, { query: NO_QUERY }) } }, contentDiff);
  app.post(
    '/api/v1/admin/chests/:id/simulation',
    {
      config: { bodyType: 'jsonapi', openapi: documented(docs.adminSimulate, { query: NO_QUERY, body: { schema: SimulationBody, required: true } }) },
    },
    simulation,
  );
  app.get('/api/v1/admin/chests/:id/drops', { config: { openapi: documented(docs.adminChestDrops, { query: NO_QUERY }) } }, drops);
  app.post(
    '/api/v1/admin/content',
    {
      config: {
        bodyType: 'json',
        openapi: documented(docs.adminLoadContent, { query: NO_QUERY, body: { schema: AppContentSchema, required: true } }),
      },
    },
    loadContent,
  );
  await webhookRoutes(app);
  await studioPlayerRoutes(app);
  await studioCreditRoutes(app);
}
