import type { ChestsDeps } from '../deps.js';
import { currentContentVersion } from '../repositories/content-repo.js';

/**
 * The app's current content version (cached: in this process for a second, then in Redis), or
 * undefined before its content arrived.
 */
export function catalogVersion(deps: Pick<ChestsDeps, 'cache' | 'pool'>, appId: string): Promise<number | undefined> {
  return deps.cache.version(appId, () => currentContentVersion(deps.pool, appId));
}
