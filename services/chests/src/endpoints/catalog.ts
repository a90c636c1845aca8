import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { appOf, endpoint, GetChestType, ListChestTypes, type ChestTypeView } from '@ccs/shared';
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
    const load = async () => {
      const { rows, total } = await listCatalog(deps.pool, appId, req);
      return { chests: rows.map(toView), total };
    };
    return readFresh(deps, appId, version, `list:${queryHash}`, ListChestTypes.reply, load, (v) => v.chests);
  });
}

/** chests.v1.get_chest_type: one catalog chest type (404 when not in the app's catalog). */
export function getChestTypeEndpoint(deps: ChestsDeps) {
  return endpoint(GetChestType, async (req, ctx) => {
    const appId = appOf(ctx);
    const version = await catalogVersion(deps, appId);
    if (version === undefined) throw chestErrors.chestTypeNotFound();
    const cached = await catalogChestType(deps, appId, version, req.chestTypeId);
    if (!cached) throw chestErrors.chestTypeNotFound();
    return cached;
  });
}

/** One catalog chest type of content `version` as the catalog shows it (null: not in the catalog). */
export function catalogChestType(
  deps: Pick<ChestsDeps, 'cache' | 'pool'>,
  appId: string,
  version: number,
  id: string,
): Promise<ChestTypeView | null> {
  const load = async () => {
    const type = await findChestType(deps.pool, appId, id, { catalogOnly: true });
    return type ? toView(type) : null;
  };
  return readFresh(deps, appId, version, `chest:${id}`, GetChestType.reply.nullable(), load, (v) => (v ? [v] : []));
}

/** How often a cached read is taken again under a later key before the database is read directly. */
const MAX_REREADS = 4;

/**
 * A cached catalog read that stays true when an announced odds change takes effect (docs/design.md §7):
 * a cached value is per content version, but a change's rules come into force at its effective
 * time with no new version. A value that still shows a change whose time has passed was read
 * before it: it is read again under a key naming that time, once per change, so the common read
 * stays a memory hit and a passed change costs one database read per process.
 */
async function readFresh<S extends z.ZodType>(
  deps: Pick<ChestsDeps, 'cache'>,
  appId: string,
  version: number,
  what: string,
  schema: S,
  load: () => Promise<z.infer<S>>,
  typesIn: (value: z.infer<S>) => ChestTypeView[],
): Promise<z.infer<S>> {
  const passed = (value: z.infer<S>) => {
    const now = Date.now();
    const times = typesIn(value).flatMap((t) => (t.oddsChange && Date.parse(t.oddsChange.effectiveAt) <= now ? [t.oddsChange.effectiveAt] : []));
    return times.sort().at(-1);
  };
  let key = what;
  for (let i = 0; i < MAX_REREADS; i++) {
    const value = await deps.cache.read(appId, version, key, schema, load);
    const latest = passed(value);
    if (latest === undefined) return value;
    key = `${what}@${latest}`;
  }
  return load();
}
