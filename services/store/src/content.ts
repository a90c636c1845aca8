import { LocalMemo, type Queryable } from '@ccs/shared';
import { currentVersion, loadContentVersion, type StoreSnapshot } from './repositories/content-repo.js';

/**
 * The store's view of each app's current content: the version number read on every call (one
 * indexed row, so a new version is seen at once by every replica), the version itself from memory
 * (a stored version never changes).
 */
export class StoreContentReader {
  private readonly memo = new LocalMemo(1000);

  constructor(private readonly db: Queryable) {}

  async current(appId: string): Promise<StoreSnapshot | undefined> {
    const version = await currentVersion(this.db, appId);
    if (version === undefined) return undefined;
    const key = `${appId}:${version}`;
    const hit = this.memo.get<StoreSnapshot>(key);
    if (hit) return hit;
    const snapshot = await loadContentVersion(this.db, appId, version);
    return snapshot && this.memo.set(key, snapshot);
  }
}
