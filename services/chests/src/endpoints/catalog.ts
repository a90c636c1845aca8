import { createHash } from 'node:crypto';
import { appOf, endpoint, GetChestType, ListChestTypes } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors } from '../errors.js';
import { findChestType, listCatalog, toView } from '../repositories/chest-types-repo.js';
import { catalogVersion } from '../cache/content-version.js';

/** chests.v1.list_chest_types: one page of the catalog, cached per query and content version. */
export function listChestTypesEndpoint(deps: ChestsDeps) {
  return endpoint(ListChestTypes, async (req, ctx) => {
    const appId = appOf(ctx);
    const version = await catalogVersion(deps, appId);
    if (version === undefined) return { chests: [], total: 0 };
    const queryHash = createHash('sha256').update(JSON.stringify(req)).digest('hex').slice(0, 32);
    return deps.cache.read(appId, version, `list:${queryHash}`, ListChestTypes.reply, async () => {
      const { rows, total } = await listCatalog(deps.pool, appId, req);
      return { chests: rows.map(toView), total };
    });
  });
}

/** chests.v1.get_chest_type: one catalog chest type (404 when not in the app's catalog). */
export function getChestTypeEndpoint(deps: ChestsDeps) {
  return endpoint(GetChestType, async (req, ctx) => {
    const appId = appOf(ctx);
    const version = await catalogVersion(deps, appId);
    if (version === undefined) throw chestErrors.chestTypeNotFound();
    const cached = await deps.cache.read(appId, version, `chest:${req.chestTypeId}`, GetChestType.reply.nullable(), async () => {
      const type = await findChestType(deps.pool, appId, req.chestTypeId, { catalogOnly: true });
      return type ? toView(type) : null;
    });
    if (!cached) throw chestErrors.chestTypeNotFound();
    return cached;
  });
}
