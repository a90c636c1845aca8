import { LocalMemo, type Queryable } from '@ccs/shared';
import { currentVersion, loadContentVersion, type StoreSnapshot } from '../repositories/content-repo.js';

/** How long a replica trusts the current version it read: another replica's new content is seen within it. */
const VERSION_TTL_MS = 1000;

/**
 * The store's view of each app's current content: the version number read from the database at
 * most once a second per app (a new version is seen by every replica within that second, by the
 * one that applied it at once), the version itself from memory (a stored version never changes).
 */
export class StoreContentReader {
  private readonly memo = new LocalMemo(1000);
  private readonly versions = new Map<string, { version: number; until: number }>();

  constructor(private readonly db: Queryable) {}

  async current(appId: string): Promise<StoreSnapshot | undefined> {
    const version = await this.version(appId);
    if (version === undefined) return undefined;
    const key = `${appId}:${version}`;
    const hit = this.memo.get<StoreSnapshot>(key);
    if (hit) return hit;
    const snapshot = await loadContentVersion(this.db, appId, version);
    return snapshot && this.memo.set(key, snapshot);
  }

  /** Forgets the app's version (its content just changed here). */
  forget(appId: string): void {
    this.versions.delete(appId);
  }

  private async version(appId: string): Promise<number | undefined> {
    const known = this.versions.get(appId);
    if (known && known.until > Date.now()) return known.version;
    const version = await currentVersion(this.db, appId);
    if (version === undefined) return undefined;
    if (this.versions.size >= 10_000) this.versions.delete(this.versions.keys().next().value!);
    this.versions.set(appId, { version, until: Date.now() + VERSION_TTL_MS });
    return version;
  }
}
