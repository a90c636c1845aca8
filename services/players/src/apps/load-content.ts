import { randomUUID } from 'node:crypto';
import { AppContentLoaded, enqueue, withTransaction, type AppContent, type CallContext, type Pool } from '@ccs/shared';
import { bumpContentVersion, storeContent } from '../repositories/apps-repo.js';
import { playerErrors } from '../errors.js';

/**
 * Loads a new content version into an app: stores its player rules and announces the whole content
 * (AppContentLoaded) in the same transaction, for every service to take its part. 404 for an unknown app.
 */
export async function loadContent(pool: Pool, appId: string, content: AppContent, ctx: CallContext): Promise<number> {
  return withTransaction(pool, async (tx) => {
    const version = await bumpContentVersion(tx, appId, content.players);
    if (version === undefined) throw playerErrors.noApp(appId);
    await storeContent(tx, appId, version, content);
    await enqueue(tx, AppContentLoaded, randomUUID(), { appId, version, content }, { ...ctx, appId });
    return version;
  });
}
