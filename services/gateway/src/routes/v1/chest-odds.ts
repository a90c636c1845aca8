import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GetChestOdds, GetObservedOdds, GetPlayerOdds, ListOddsLog, paginationLinks } from '@ccs/shared';
import { baseUrl, callContext, jsonApiQuery, sendDocument, uuidParam } from '../../lib/http.js';
import { contentRead } from '../../plugins/reply-cache.js';
import { linkBase, selfLinks } from './resource-links.js';
import { gatewayErrors } from '../../errors.js';
import { chestOddsDocument, oddsLogEntry, observedOddsDocument, type OddsLogDocument } from '../../resources/chest-odds.js';

/** Query members of the odds: an earlier content version's rules may be asked for. */
export const ODDS_QUERY = { extra: ['rules_version'] };
const RulesVersionSchema = z.coerce.number().int().min(1).max(2_147_483_647);

/** `rules_version` of the query: a content version number, or none (400 for anything else). */
function rulesVersionOf(request: FastifyRequest): number | undefined {
  const raw = (request.query as Record<string, unknown> | undefined)?.rules_version;
  if (raw === undefined) return undefined;
  const parsed = RulesVersionSchema.safeParse(raw);
  if (!parsed.success || typeof raw !== 'string') throw gatewayErrors.invalidRulesVersion();
  return parsed.data;
}

/**
 * GET /api/v1/chests/{id}/odds: the exact odds of a catalog chest, computed from its rules, with
 * the rules themselves, pity and duplicates disclosed; with a Bearer token, `meta.player` adds the
 * caller's odds for their next opening (pity applied), read fresh for each caller.
 */
export async function getOdds(request: FastifyRequest, reply: FastifyReply) {
  const chestTypeId = uuidParam(request, 'id');
  jsonApiQuery(request, ODDS_QUERY);
  const rulesVersion = rulesVersionOf(request);
  const o = await contentRead(request, GetChestOdds, { chestTypeId, rulesVersion });
  const mine =
    request.player && rulesVersion === undefined ? await request.server.bus.request(GetPlayerOdds, { chestTypeId }, callContext(request)) : undefined;
  if (request.player) reply.header('cache-control', 'private, no-store');
  return sendDocument(reply, 200, chestOddsDocument(o, selfLinks.chestOdds(linkBase(request), o.chestTypeId, rulesVersion), mine));
}

/**
 * GET /api/v1/chests/{id}/odds/observed (docs/design.md §7): what the app's real openings of the
 * chest drew under a rules version against what it disclosed, with a chi-square p-value.
 * Aggregates, the same for every caller, but never cached: each opening changes them.
 */
export async function getObservedOdds(request: FastifyRequest, reply: FastifyReply) {
  const chestTypeId = uuidParam(request, 'id');
  jsonApiQuery(request, ODDS_QUERY);
  const rulesVersion = rulesVersionOf(request);
  const o = await request.server.bus.request(GetObservedOdds, { chestTypeId, rulesVersion }, callContext(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, observedOddsDocument(o, selfLinks.chestObservedOdds(linkBase(request), o.chestTypeId, rulesVersion)));
}

/** Query members of the odds log: pages of at most 100. */
export const ODDS_LOG_QUERY = { page: { defaultLimit: 20, maxLimit: 100 } };

/** GET /api/v1/odds-log (docs/design.md §7): a page of the app's hash-chained odds log, oldest first. */
export async function listOddsLog(request: FastifyRequest, reply: FastifyReply) {
  const q = jsonApiQuery(request, ODDS_LOG_QUERY);
  const r = await request.server.bus.request(ListOddsLog, { page: q.page }, callContext(request));
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: r.entries.map(oddsLogEntry),
    meta: { total_count: r.total, page: q.page },
    links: paginationLinks(baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL), '/api/v1/odds-log', rest, q.page, r.total),
  } satisfies OddsLogDocument);
}
