import { randomUUID } from 'node:crypto';
import { AppContentLoaded, enqueue, type AppContent, type CallContext, type Queryable } from '@ccs/shared';
import { newSecret } from '../credentials/secrets.js';
import { insertApiKey } from '../repositories/api-keys-repo.js';
import { insertApp, storeContent } from '../repositories/apps-repo.js';

/** A created app and its keys (the raw keys exist only in this answer). */
export interface CreatedApp {
  appId: string;
  publishableKey: string;
  secretKey?: string;
}

/**
 * Creates an app with its content, in the caller's transaction: the app row with its player rules,
 * a publishable key (the given one, or a new one), a secret key unless `withSecretKey` is false, and
 * the AppContentLoaded message (version 1) through which every other service learns the content.
 */
export async function createApp(
  tx: Queryable,
  a: { name: string; content: AppContent; isDemo: boolean; publishableKey?: string; withSecretKey: boolean },
  ctx: CallContext,
): Promise<CreatedApp> {
  const appId = randomUUID();
  await insertApp(tx, { id: appId, name: a.name, isDemo: a.isDemo, rules: a.content.players });
  await storeContent(tx, appId, 1, a.content);
  const publishableKey = a.publishableKey ?? newSecret('pk');
  await insertApiKey(tx, appId, 'publishable', publishableKey);
  const secretKey = a.withSecretKey ? newSecret('sk') : undefined;
  if (secretKey) await insertApiKey(tx, appId, 'secret', secretKey);
  await enqueue(tx, AppContentLoaded, randomUUID(), { appId, version: 1, content: a.content }, { ...ctx, appId });
  return { appId, publishableKey, secretKey };
}
