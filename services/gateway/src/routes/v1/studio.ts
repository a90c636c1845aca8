import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  AdminChestsStats,
  AdminCollectionsStats,
  AdminListAudit,
  AdminPlayersStats,
  AdminRecordAudit,
  AdminWalletStats,
  AppContentSchema,
  paginationLinks,
} from '@ccs/shared';
import { baseUrl, jsonApiQuery, sendDocument } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/studio.js';
import { studioCall } from './studio-call.js';
import { drops, simulation, SimulationBody } from './studio-chests.js';
import { contentDiff, contentVersions, loadContent } from './studio-content.js';
import { player } from './studio-player-lookup.js';
import { webhookRoutes } from './studio-webhooks.js';
import { studioPlayerRoutes } from './studio-players.js';
import { studioCreditRoutes } from './studio-credits.js';
import { studioBannerRoutes } from './studio-banners.js';
import { studioStoreRoutes } from './store.js';
import { linkBase } from './resource-links.js';
import { studioSupportRoutes } from './studio-support.js';
import { studioTradeRoutes } from './studio-trades.js';
import { noteOf } from './studio-note.js';
import { type AuditLogDocument, auditEntry } from '../../resources/studio-audit.js';
import { appOverviewDocument } from '../../resources/studio-overview.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The admin API's audit log records actions, not reads: every call but a GET (or HEAD), unless
     * its route is a read made with a body (a search, a simulation), which sets this to false.
     */
    audited?: boolean;
  }
}

/**
 * The admin API (docs/operations.md, "Admin API"): what a studio's tools read and do, with the
 * app's secret key. Registered in the studio scope (plugins/scopes.ts), so the app is always the
 * secret key's own: another app's data cannot be named. Every action (a call that is not a read)
 * is recorded in the app's audit log, with the note its body gives (`meta.note`).
 * The gateway only validates, routes and renders: what the answers hold (drops against disclosed
 * odds, content diffs, simulations' statistics) is computed by the service that owns the data.
 */

const AUDIT_QUERY = { page: { defaultLimit: 20, maxLimit: 100 } };

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
  return sendDocument(reply, 200, appOverviewDocument(appId, players, chests, collections, wallet, linkBase(request)));
}

/** GET /api/v1/admin/audit: the app's audit log, newest first. */
async function audit(request: FastifyRequest, reply: FastifyReply) {
  const q = jsonApiQuery(request, AUDIT_QUERY);
  const r = await request.server.bus.request(AdminListAudit, { appId: request.tenant!.appId, page: q.page }, studioCall(request));
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: r.entries.map(auditEntry),
    meta: { total_count: r.total, page: q.page },
    links: paginationLinks(baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL), '/api/v1/admin/audit', rest, q.page, r.total),
  } satisfies Omit<AuditLogDocument, 'links'> & { links: ReturnType<typeof paginationLinks> });
}

/** Which credential made a call, as the audit log shows it (never the key itself). */
const actorOf = (request: FastifyRequest) => {
  const key = String(request.headers.apikey ?? '');
  return `${request.tenant?.keyKind ?? 'unknown'} key …${key.slice(-4)}`;
};

/** Whether a call is recorded in the audit log: an action, not a read. */
const audited = (request: FastifyRequest) => request.method !== 'GET' && request.method !== 'HEAD' && request.routeOptions.config.audited !== false;

/**
 * The admin API's routes (studio scope). Each action is recorded in the audit log before its answer
 * leaves, so the log holds a studio's actions in the order they were answered; an entry that cannot
 * be recorded (players unreachable) is logged and the answer still goes out: the action is done.
 */
export async function studioRoutes(app: FastifyInstance) {
  app.addHook('onSend', async (request, reply, payload) => {
    const appId = request.tenant?.appId;
    if (appId && audited(request)) {
      const target = (request.params as Record<string, string> | undefined)?.id ?? null;
      const entry = {
        appId,
        actor: actorOf(request),
        action: `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`.replace(/:([a-z_]+)/g, '{$1}'),
        target: target ? target.slice(0, 320) : ((request.params as Record<string, string> | undefined)?.version ?? null),
        status: reply.statusCode,
        requestId: request.id,
        note: noteOf(request.body),
      };
      await app.bus
        .request(AdminRecordAudit, entry, { requestId: request.id, appId })
        .catch((err) => request.log.error({ err: String(err) }, 'admin audit entry not recorded'));
    }
    return payload;
  });
  app.get('/api/v1/admin/overview', { config: { openapi: documented(docs.adminOverview, { query: NO_QUERY }) } }, overview);
  app.get('/api/v1/admin/players/:id', { config: { openapi: documented(docs.adminGetPlayer, { query: NO_QUERY }) } }, player);
  app.get('/api/v1/admin/audit', { config: { openapi: documented(docs.adminListAudit, { query: AUDIT_QUERY }) } }, audit);
  app.get('/api/v1/admin/content', { config: { openapi: documented(docs.adminListContentVersions, { query: NO_QUERY }) } }, contentVersions);
  app.get('/api/v1/admin/content/:version/diff', { config: { openapi: documented(docs.adminContentDiff, { query: NO_QUERY }) } }, contentDiff);
  app.post(
    '/api/v1/admin/chests/:id/simulation',
    {
      config: {
        bodyType: 'jsonapi',
        audited: false,
        openapi: documented(docs.adminSimulate, { query: NO_QUERY, body: { schema: SimulationBody, required: true } }),
      },
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
  await studioBannerRoutes(app);
  await studioStoreRoutes(app);
  await studioSupportRoutes(app);
  await studioTradeRoutes(app);
}
