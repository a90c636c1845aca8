import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  AppError,
  applyFieldset,
  COLLECTIBLE_FILTER_FIELDS,
  COLLECTIBLE_SORT_FIELDS,
  COLLECTION_SORT_FIELDS,
  GetCollectible,
  GetCollection,
  GetPlayerCollection,
  ListCollectibles,
  ListCollectionCollectibles,
  ListCollections,
  paginationLinks,
  selfLink,
  type ParsedQuery,
  type QuerySpec,
  type ReplyOf,
  type RequestOf,
  type SubjectContract,
  zodIssuesToErrors,
} from '@ccs/shared';
import { appIdOf, jsonApiQuery, playerOf, sendDocument } from '../../lib/http.js';
import { linkBase } from './resource-links.js';
import { contentRead } from '../../plugins/reply-cache.js';
import { documented } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/collections.js';
import { gatewayErrors } from '../../errors.js';
import {
  COLLECTION_FIELDSETS,
  collectibleResource,
  collectionResource,
  ownedCollectibleResource,
  completedAtMeta,
  completenessMeta,
} from '../../resources/collections.js';

const FIELDS = COLLECTION_FIELDSETS;
const PAGE = { defaultLimit: 20, maxLimit: 100 };

/** Query members of each route (the OpenAPI document is generated from the same objects). */
const QUERY = {
  collections: { fields: FIELDS, sort: COLLECTION_SORT_FIELDS, page: PAGE },
  collection: { include: ['collectibles'], fields: FIELDS },
  collectionCollectibles: { include: ['collection'], fields: FIELDS, sort: COLLECTIBLE_SORT_FIELDS, page: { defaultLimit: 100, maxLimit: 100 } },
  collectibles: { fields: FIELDS, sort: COLLECTIBLE_SORT_FIELDS, filter: { fields: COLLECTIBLE_FILTER_FIELDS, nested: true }, page: PAGE },
  collectible: { include: ['collection'], fields: FIELDS },
  playerCollection: { include: ['collection'], fields: FIELDS, page: PAGE },
} satisfies Record<string, QuerySpec>;

/**
 * Sends a request to the collections service after checking it against the contract here, so a
 * query the parser let through but the contract bounds (e.g. too many sort keys or filter values)
 * is a 400 naming the parameter, not a failure. Content-only reads may be answered by the
 * gateway's reply cache (contentRead says which, and for which callers).
 */
async function ask<C extends SubjectContract>(request: FastifyRequest, contract: C, payload: RequestOf<C>): Promise<ReplyOf<C>> {
  const checked = contract.request.safeParse(payload);
  if (!checked.success) throw AppError.many(zodIssuesToErrors(checked.error.issues, 'query'));
  return contentRead(request, contract, payload);
}

const isOneOf = <F extends string>(value: string, allowed: readonly F[]): value is F => (allowed as readonly string[]).includes(value);

/** The parsed sort keys, typed by the fields the route allows (the parser already refused others). */
function sortOf<F extends string>(query: ParsedQuery, allowed: readonly F[]): { field: F; direction: 'asc' | 'desc' }[] {
  return query.sort.flatMap((s) => (isOneOf(s.field, allowed) ? [{ field: s.field, direction: s.direction }] : []));
}

/** A collection or collectible id from the path: any string may be asked for, overlong ones cannot exist. */
function contentId(request: FastifyRequest, kind: 'collection' | 'collectible'): string {
  const id = (request.params as Record<string, string>).id ?? '';
  if (id.length === 0 || id.length > 200) throw gatewayErrors.contentNotFound(kind);
  return id;
}

const pathOf = (request: FastifyRequest) => request.url.split('?')[0]!;
const rawQuery = (request: FastifyRequest) => (request.query ?? {}) as Record<string, unknown>;
const base = linkBase;

/** Top-level pagination links and meta of a list answer. */
function paged(request: FastifyRequest, query: ParsedQuery, total: number) {
  const { page: _page, ...rest } = rawQuery(request);
  return {
    links: paginationLinks(base(request), pathOf(request), rest, query.page, total),
    page: { limit: query.page.limit, offset: query.page.offset },
  };
}

/** Answers that carry the caller's own progress must not be stored by shared caches. */
function privateIfPlayer(request: FastifyRequest, reply: FastifyReply): void {
  if (request.player) reply.header('cache-control', 'private, no-store');
}

/** GET /api/v1/collections: the app's collections, paginated. */
async function listCollections(request: FastifyRequest, reply: FastifyReply) {
  appIdOf(request);
  const query = jsonApiQuery(request, QUERY.collections);
  const sort = sortOf(query, COLLECTION_SORT_FIELDS);
  const { total, collections, completedAt } = await ask(request, ListCollections, { page: query.page, sort });
  const { links, page } = paged(request, query, total);
  const player = Boolean(request.player);
  privateIfPlayer(request, reply);
  return sendDocument(reply, 200, {
    data: collections.map((c) => applyFieldset(collectionResource(c, base(request), completedAtMeta(player, completedAt?.[c.id])), query.fields)),
    meta: { total_count: total, page },
    links,
  });
}

/** GET /api/v1/collections/{id}: one collection, `include=collectibles`, and the caller's completeness. */
async function getCollection(request: FastifyRequest, reply: FastifyReply) {
  appIdOf(request);
  const collectionId = contentId(request, 'collection');
  const query = jsonApiQuery(request, QUERY.collection);
  const includeCollectibles = query.include.includes('collectibles');
  const found = await ask(request, GetCollection, { collectionId, includeCollectibles });
  privateIfPlayer(request, reply);
  const player = Boolean(request.player);
  return sendDocument(reply, 200, {
    data: applyFieldset(collectionResource(found.collection, base(request), completedAtMeta(player, found.completeness.completedAt)), query.fields),
    ...(includeCollectibles
      ? { included: (found.collectibles ?? []).map((c) => applyFieldset(collectibleResource(c, base(request)), query.fields)) }
      : {}),
    meta: { collectible_count: found.collection.collectibleIds.length, collection_completeness: completenessMeta(found.completeness, player) },
    links: { self: selfLink(base(request), pathOf(request), rawQuery(request)) },
  });
}

/** GET /api/v1/collections/{id}/collectibles: a collection's collectibles, `include=collection`. */
async function listCollectionCollectibles(request: FastifyRequest, reply: FastifyReply) {
  appIdOf(request);
  const collectionId = contentId(request, 'collection');
  const query = jsonApiQuery(request, QUERY.collectionCollectibles);
  const sort = sortOf(query, COLLECTIBLE_SORT_FIELDS);
  const found = await ask(request, ListCollectionCollectibles, { collectionId, sort });
  const total = found.collectibles.length;
  const { links, page } = paged(request, query, total);
  privateIfPlayer(request, reply);
  return sendDocument(reply, 200, {
    data: found.collectibles
      .slice(page.offset, page.offset + page.limit)
      .map((c) => applyFieldset(collectibleResource(c, base(request)), query.fields)),
    ...(query.include.includes('collection') ? { included: [applyFieldset(collectionResource(found.collection, base(request)), query.fields)] } : {}),
    meta: {
      total_collectibles: total,
      collection_info: { id: found.collection.id, name: found.collection.name, completion_rate: found.completeness.completionRate },
      page,
    },
    links,
  });
}

/** GET /api/v1/collectibles: the app's collectibles, `filter[collection_id]`, `filter[rarity]`, paginated. */
async function listCollectibles(request: FastifyRequest, reply: FastifyReply) {
  appIdOf(request);
  const query = jsonApiQuery(request, QUERY.collectibles);
  const sort = sortOf(query, COLLECTIBLE_SORT_FIELDS);
  const { total, collectibles } = await ask(request, ListCollectibles, { page: query.page, sort, ...(query.filter ? { filter: query.filter } : {}) });
  const { links, page } = paged(request, query, total);
  return sendDocument(reply, 200, {
    data: collectibles.map((c) => applyFieldset(collectibleResource(c, base(request)), query.fields)),
    meta: { total_count: total, page },
    links,
  });
}

/**
 * GET /api/v1/collectibles/{id}: one collectible, `include=collection`; `rarity_info` always, the
 * caller's ownership (`copies_owned`: copies kept; one past the app's duplicates.max_copies is
 * converted instead) and collection progress only on authenticated requests.
 */
async function getCollectible(request: FastifyRequest, reply: FastifyReply) {
  appIdOf(request);
  const collectibleId = contentId(request, 'collectible');
  const query = jsonApiQuery(request, QUERY.collectible);
  const includeCollection = query.include.includes('collection');
  const found = await ask(request, GetCollectible, { collectibleId, includeCollection });
  const own = found.ownership;
  privateIfPlayer(request, reply);
  return sendDocument(reply, 200, {
    data: applyFieldset(collectibleResource(found.collectible, base(request)), query.fields),
    ...(includeCollection && found.collection
      ? { included: [applyFieldset(collectionResource(found.collection, base(request)), query.fields)] }
      : {}),
    meta: {
      rarity_info: { level: found.rarityInfo.level, drop_rate: found.rarityInfo.dropRate },
      ...(own
        ? {
            owned_by_player: own.ownedByPlayer,
            acquired_at: own.acquiredAt,
            owned_count: own.ownedCount,
            // The copies kept (duplicates past the app's max_copies are converted, not kept).
            copies_owned: own.ownedCount,
            collection_progress: {
              current_item: own.progress.currentItem,
              total_items: own.progress.totalItems,
              completion_percentage: own.progress.completionPercentage,
            },
          }
        : {}),
    },
    links: { self: selfLink(base(request), pathOf(request), rawQuery(request)) },
  });
}

/**
 * GET /api/v1/players/me/collection: what the calling player owns, newest acquisition first, each
 * with its copies; `meta.collections` has the completeness of every collection of the app.
 */
async function playerCollection(request: FastifyRequest, reply: FastifyReply) {
  appIdOf(request);
  const player = playerOf(request);
  const query = jsonApiQuery(request, QUERY.playerCollection);
  const found = await ask(request, GetPlayerCollection, { page: query.page });
  const { links, page } = paged(request, query, found.total);
  const shown = new Set(found.items.map((i) => i.collectible.collectionId));
  reply.header('cache-control', 'private, no-store');
  return sendDocument(reply, 200, {
    data: found.items.map((i) => applyFieldset(ownedCollectibleResource(i, base(request)), query.fields)),
    ...(query.include.includes('collection')
      ? {
          included: found.collections
            .filter((c) => shown.has(c.collection.id))
            .map((c) => applyFieldset(collectionResource(c.collection, base(request)), query.fields)),
        }
      : {}),
    meta: {
      player_id: player.id,
      total_count: found.total,
      total_copies: found.totalCopies,
      page,
      collections: found.collections.map((c) => ({ id: c.collection.id, name: c.collection.name, ...completenessMeta(c.completeness, true) })),
    },
    links,
  });
}

const doc = (op: Parameters<typeof documented>[0], query: QuerySpec) => ({ config: { openapi: documented(op, { query }) } });

/** The collections and collectibles resources (app scope: a Bearer token adds the caller's progress). */
export async function collectionRoutes(app: FastifyInstance) {
  app.get('/api/v1/collections', doc(docs.listCollections, QUERY.collections), listCollections);
  app.get('/api/v1/collections/:id', doc(docs.getCollection, QUERY.collection), getCollection);
  app.get('/api/v1/collections/:id/collectibles', doc(docs.listCollectionCollectibles, QUERY.collectionCollectibles), listCollectionCollectibles);
  app.get('/api/v1/collectibles', doc(docs.listCollectibles, QUERY.collectibles), listCollectibles);
  app.get('/api/v1/collectibles/:id', doc(docs.getCollectible, QUERY.collectible), getCollectible);
}

/** The calling player's collection (player scope). */
export async function playerCollectionRoutes(app: FastifyInstance) {
  app.get('/api/v1/players/me/collection', doc(docs.getPlayerCollection, QUERY.playerCollection), playerCollection);
}
