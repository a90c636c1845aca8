import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GetChestOdds, GetObservedOdds, GetPlayerOdds, ListOddsLog, oddsLogRecord, paginationLinks, type OddsLogEntryView } from '@ccs/shared';
import { baseUrl, callContext, jsonApiQuery, sendDocument, uuidParam } from '../../lib/http.js';
import { contentRead } from '../../plugins/reply-cache.js';
import { linkBase, selfLinks } from './resource-links.js';
import { gatewayErrors } from '../../errors.js';
import type { ChestOddsDocument, ObservedOddsDocument, OddsLogDocument } from '../../resources/chests.js';

/** Query members of the odds: an earlier content version's rules may be asked for. */
export const ODDS_QUERY = { extra: ['rules_version'] };
const RulesVersionSchema = z.coerce.number().int().min(1).max(2_147_483_647);

const shares = (list: { rarity: string; probability: number; expectedCount: number }[]) =>
  list.map((r) => ({ rarity: r.rarity, probability: exact(r.probability), expected_count: exact(r.expectedCount) }));

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
  return sendDocument(reply, 200, {
    data: {
      type: 'chest_odds',
      id: o.chestTypeId,
      attributes: {
        items_per_open: { ...o.itemsPerOpen, expected: exact(o.itemsPerOpen.expected) },
        rarities: shares(o.rarities),
        collectibles: o.collectibles.map((c) => ({ ...c, probability: exact(c.probability) })),
        rules_version: o.rulesVersion,
        rules: o.rules,
        rule_inputs: o.ruleInputs,
        pity: o.pity && {
          rarity: o.pity.rarity,
          hard: o.pity.hard,
          soft_start: o.pity.softStart,
          soft_step: o.pity.softStep,
          group: o.pity.group,
          effective_rarities: shares(o.pity.effectiveRarities),
        },
        duplicates: o.duplicates,
      },
      relationships: {},
      links: selfLinks.chestOdds(linkBase(request), o.chestTypeId, rulesVersion),
    },
    ...(mine || o.oddsChange
      ? {
          meta: {
            ...(mine
              ? { player: { opens_since_pity: mine.opensSincePity, guaranteed_within: mine.guaranteedWithin, rarities: shares(mine.rarities) } }
              : {}),
            ...(o.oddsChange ? { odds_change: { effective_at: o.oddsChange.effectiveAt, rules_version: o.oddsChange.rulesVersion } } : {}),
          },
        }
      : {}),
  } satisfies ChestOddsDocument);
}

/**
 * GET /api/v1/chests/{id}/odds/observed (DESIGN.md §7): what the app's real openings of the chest
 * drew under a rules version against what it disclosed, with a chi-square p-value. Aggregates,
 * the same for every caller, but never cached: each opening changes them.
 */
export async function getObservedOdds(request: FastifyRequest, reply: FastifyReply) {
  const chestTypeId = uuidParam(request, 'id');
  jsonApiQuery(request, ODDS_QUERY);
  const rulesVersion = rulesVersionOf(request);
  const o = await request.server.bus.request(GetObservedOdds, { chestTypeId, rulesVersion }, callContext(request));
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: {
      type: 'chest_observed_odds',
      id: o.chestTypeId,
      attributes: {
        rules_version: o.rulesVersion,
        openings: o.openings,
        items: o.items,
        since: o.since,
        rarities: o.rarities.map((r) => ({ rarity: r.rarity, disclosed: exact(r.disclosed), observed: exact(r.observed), count: r.count })),
        chi_square_p_value: o.chiSquarePValue === null ? null : exact(o.chiSquarePValue),
      },
      relationships: {},
      links: selfLinks.chestObservedOdds(linkBase(request), o.chestTypeId, rulesVersion),
    },
  } satisfies ObservedOddsDocument);
}

/** Query members of the odds log: pages of at most 100. */
export const ODDS_LOG_QUERY = { page: { defaultLimit: 20, maxLimit: 100 } };

/** An entry's attributes: its public fields but the sequence, which is its id. */
function attributesOf(e: OddsLogEntryView) {
  const { seq: _seq, ...attributes } = oddsLogRecord(e);
  return attributes;
}

/** GET /api/v1/odds-log (DESIGN.md §7): a page of the app's hash-chained odds log, oldest first. */
export async function listOddsLog(request: FastifyRequest, reply: FastifyReply) {
  const q = jsonApiQuery(request, ODDS_LOG_QUERY);
  const r = await request.server.bus.request(ListOddsLog, { page: q.page }, callContext(request));
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: r.entries.map((e) => ({
      type: 'odds_log_entry' as const,
      id: String(e.seq),
      attributes: attributesOf(e),
      relationships: {},
    })),
    meta: { total_count: r.total, page: q.page },
    links: paginationLinks(baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL), '/api/v1/odds-log', rest, q.page, r.total),
  } satisfies OddsLogDocument);
}

/**
 * Drops binary floating-point noise (0.48750000000000004 → 0.4875) from a disclosed figure: 15
 * significant digits are beyond what any rule expresses and keep every sum at 1 within 1e-13.
 */
const exact = (x: number): number => Number(x.toPrecision(15));
