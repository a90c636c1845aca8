import { readContentFile, SHIPPED_PLACEHOLDERS, withTransaction, type Logger, type Pool } from '@ccs/shared';
import { randomUUID } from 'node:crypto';
import { apiKeyExists, insertApiKey, revokeRawKeys } from '../repositories/api-keys-repo.js';
import { findDemoAppId, lockDemoAppCreation } from '../repositories/apps-repo.js';
import { createApp } from './create-app.js';

/**
 * On first start (no demo app yet) creates the demo app with the project's default content; its
 * publishable key is CHESTS_DEMO_API_KEY when set, else a random key logged once, and its secret
 * key (the studio console's sign-in, the admin API) CHESTS_DEMO_SECRET_KEY when set, else a
 * random one logged once. Either variable set later is added to the existing demo app. An
 * advisory lock keeps two replicas starting together from racing. True when it created the app
 * (its content is in the outbox).
 */
export async function ensureDemoApp(pool: Pool, demoKey: string | undefined, log: Logger, demoSecretKey?: string): Promise<boolean> {
  const ctx = { requestId: randomUUID() };
  return withTransaction(pool, async (tx) => {
    await lockDemoAppCreation(tx);
    // A key this repository once shipped as a default (compose, the dev overlay) opens nothing,
    // even in a database created while it was in use.
    const revoked = await revokeRawKeys(tx, SHIPPED_PLACEHOLDERS);
    if (revoked) log.warn({ revoked }, 'revoked API keys that were shipped as examples in the repository (anyone can read them)');
    const demoId = await findDemoAppId(tx);
    if (!demoId) {
      const content = readContentFile();
      const created = await createApp(tx, { name: 'Demo app', content, isDemo: true, publishableKey: demoKey, withSecretKey: !demoSecretKey }, ctx);
      if (demoSecretKey) await insertApiKey(tx, created.appId, 'secret', demoSecretKey);
      if (demoKey) log.info({ appId: created.appId }, 'demo app created with CHESTS_DEMO_API_KEY');
      else
        log.info({ appId: created.appId }, `demo app created; API key: ${created.publishableKey} (shown once; set CHESTS_DEMO_API_KEY to choose it)`);
      if (created.secretKey)
        log.info(
          { appId: created.appId },
          `demo app secret key (studio console and admin API): ${created.secretKey} (shown once; set CHESTS_DEMO_SECRET_KEY to choose it)`,
        );
      return true;
    }
    if (demoKey && !(await apiKeyExists(tx, demoKey))) {
      await insertApiKey(tx, demoId, 'publishable', demoKey);
      log.info({ appId: demoId }, 'CHESTS_DEMO_API_KEY added to the demo app');
    }
    if (demoSecretKey && !(await apiKeyExists(tx, demoSecretKey))) {
      await insertApiKey(tx, demoId, 'secret', demoSecretKey);
      log.info({ appId: demoId }, 'CHESTS_DEMO_SECRET_KEY added to the demo app');
    }
    return false;
  });
}
