import { appOf, COLLECTIBLE_FILTER_FIELDS, endpoint, ListCollectibles, type FilterNode } from '@ccs/shared';
import type { CatalogReader } from '../catalog/catalog-reader.js';
import { unfilterableField } from '../errors.js';

const FILTERABLE: readonly string[] = COLLECTIBLE_FILTER_FIELDS;

/** Every field a filter compares, so an unfilterable one is a 400, not a failed query. */
function filterFields(node: FilterNode): string[] {
  if ('and' in node) return node.and.flatMap(filterFields);
  if ('or' in node) return node.or.flatMap(filterFields);
  if ('not' in node) return filterFields(node.not);
  return [node.field];
}

/** collections.v1.list_collectibles: one page of the app's collectibles, filtered (cached per content version). */
export function listCollectiblesEndpoint(catalog: CatalogReader) {
  return endpoint(ListCollectibles, async (req, ctx) => {
    const bad = req.filter ? filterFields(req.filter).find((f) => !FILTERABLE.includes(f)) : undefined;
    if (bad !== undefined) throw unfilterableField(bad, FILTERABLE);
    return catalog.collectiblesPage(appOf(ctx), req.filter, req.page, req.sort);
  });
}
