import { buildDropTable, type DropTable, type Queryable } from '@ccs/shared';
import { findChestType, type ChestTypeRecord } from '../repositories/chest-types-repo.js';
import { loadContentVersion, type ContentSnapshot, type StoredCollectible } from '../repositories/content-repo.js';

/** A chest type's rules resolved against the content version that defined them. */
export interface ResolvedChestType {
  /** The chest type whose rules these are. */
  type: ChestTypeRecord;
  table: DropTable;
  content: ContentSnapshot;
  collectibles: Map<string, StoredCollectible>;
  experience: Map<string, number>;
}

const MAX_ENTRIES = 500;

/**
 * Drop tables per (app, chest type, content version), kept in memory: a content version never
 * changes once stored, so neither does a table built from it.
 */
export class DropTables {
  private readonly snapshots = new Map<string, Promise<ContentSnapshot | undefined>>();
  private readonly tables = new Map<string, ResolvedChestType>();

  constructor(private readonly db: Queryable) {}

  /** The content version `version` of an app (undefined if never received). */
  content(appId: string, version: number): Promise<ContentSnapshot | undefined> {
    const key = `${appId}:${version}`;
    let hit = this.snapshots.get(key);
    if (!hit) {
      hit = loadContentVersion(this.db, appId, version);
      // Only found versions stay cached: a version not received yet may arrive later.
      hit.then(
        (s) => void (s || this.snapshots.delete(key)),
        () => void this.snapshots.delete(key),
      );
      remember(this.snapshots, key, hit);
    }
    return hit;
  }

  /**
   * The resolved rules of chest type `typeId` at `contentVersion` (the version its row had when
   * read): from memory, else loaded with the pool's own connections (the caller holds none, so a
   * busy pool cannot deadlock on it). If the type changed meanwhile, its current rules are used.
   */
  async resolveType(appId: string, typeId: string, contentVersion: number): Promise<ResolvedChestType> {
    const hit = this.tables.get(`${appId}:${typeId}:${contentVersion}`);
    if (hit) return hit;
    const type = await findChestType(this.db, appId, typeId, { catalogOnly: false });
    if (!type) throw new Error(`chest type ${typeId} of app ${appId} is missing`);
    return this.resolve(appId, type);
  }

  /**
   * The resolved rules of a chest type as content version `version` defined them (its rules of
   * that version, against that version's rarities and collectibles); undefined when the type was
   * not in that version, or the version predates stored rules (before migration 0005) and is not
   * the type's current one.
   */
  async resolveAt(appId: string, type: ChestTypeRecord, version: number): Promise<ResolvedChestType | undefined> {
    if (version === type.contentVersion) return this.resolve(appId, type);
    const content = await this.content(appId, version);
    const rules = content?.chestRules?.[type.slug];
    if (!content || !rules) return undefined;
    return this.build(appId, { ...type, rules, contentVersion: version }, content);
  }

  /** The resolved rules of a chest type (its rules against its content version). */
  async resolve(appId: string, type: ChestTypeRecord): Promise<ResolvedChestType> {
    const key = `${appId}:${type.id}:${type.contentVersion}`;
    const hit = this.tables.get(key);
    if (hit) return hit;
    const content = await this.content(appId, type.contentVersion);
    if (!content) throw new Error(`content version ${type.contentVersion} of app ${appId} is missing`);
    return this.build(appId, type, content);
  }

  private build(appId: string, type: ChestTypeRecord, content: ContentSnapshot): ResolvedChestType {
    const key = `${appId}:${type.id}:${type.contentVersion}`;
    const hit = this.tables.get(key);
    if (hit) return hit;
    const table = buildDropTable(
      type.rules,
      content.rarities,
      content.collectibles.map((c) => ({ id: c.id, collectionId: c.collection_id, rarity: c.rarity })),
    );
    const resolved: ResolvedChestType = {
      type,
      table,
      content,
      collectibles: new Map(content.collectibles.map((c) => [c.id, c])),
      experience: new Map(content.rarities.map((r) => [r.id, r.experience])),
    };
    remember(this.tables, key, resolved);
    return resolved;
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value!);
  map.set(key, value);
}
