import type { FastifyReply, FastifyRequest } from 'fastify';
import { applyFieldset, ChestSortFieldSchema, CHEST_SORT_FIELDS, FilterNodeSchema, GetChestType, ListChestTypes, paginationLinks } from '@ccs/shared';
import { jsonApiQuery, sendDocument, uuidParam } from '../../lib/http.js';
import { contentRead } from '../../plugins/reply-cache.js';
import { catalogChest, CHEST_FIELDS } from '../../resources/chests.js';
import { purchasableFor } from './purchasable.js';
import { linkBase } from './resource-links.js';
import { gatewayErrors } from '../../errors.js';

/** Query members of the catalog. */
export const CATALOG_QUERY = {
  fields: { chest: CHEST_FIELDS },
  sort: CHEST_SORT_FIELDS,
  filter: { fields: CHEST_SORT_FIELDS, nested: true },
  page: { defaultLimit: 20, maxLimit: 100 },
};
/** Query members of one catalog chest. */
export const CHEST_QUERY = { fields: { chest: CHEST_FIELDS } };

/** GET /api/v1/chests: the catalog, filtered, sorted and paginated. */
export async function listChests(request: FastifyRequest, reply: FastifyReply) {
  const q = jsonApiQuery(request, CATALOG_QUERY);
  // The parser bounds depth and width; the contract also bounds list values.
  if (q.filter && !FilterNodeSchema.safeParse(q.filter).success) {
    throw gatewayErrors.tooManyFilterValues();
  }
  const sort = q.sort.map((s) => ({ field: ChestSortFieldSchema.parse(s.field), direction: s.direction }));
  const [result, purchasable] = await Promise.all([
    contentRead(request, ListChestTypes, { filter: q.filter, sort, page: q.page }),
    purchasableFor(request, reply),
  ]);
  const { page: _page, ...rest } = (request.query ?? {}) as Record<string, unknown>;
  const base = linkBase(request);
  return sendDocument(reply, 200, {
    data: result.chests.map((c) => applyFieldset(catalogChest(c, base, purchasable), q.fields)),
    meta: { total_count: result.total, page: q.page },
    links: paginationLinks(base, '/api/v1/chests', rest, q.page, result.total),
  });
}

/** GET /api/v1/chests/{id}: one catalog chest. */
export async function getChest(request: FastifyRequest, reply: FastifyReply) {
  const chestTypeId = uuidParam(request, 'id');
  const q = jsonApiQuery(request, CHEST_QUERY);
  const [chest, purchasable] = await Promise.all([contentRead(request, GetChestType, { chestTypeId }), purchasableFor(request, reply)]);
  return sendDocument(reply, 200, { data: applyFieldset(catalogChest(chest, linkBase(request), purchasable), q.fields), meta: {} });
}
