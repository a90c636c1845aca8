import {
  AdminCreateApp,
  AdminLoadContent,
  AppError,
  DEFAULT_CONTENT_PATH,
  endpoint,
  readContentFile,
  withTransaction,
  type AppContent,
} from '@ccs/shared';
import { createApp } from '../apps/create-app.js';
import { loadContent } from '../apps/load-content.js';
import type { PlayersDeps } from '../deps.js';
import { playerErrors } from '../errors.js';

/** Which content a new app got (the reply's `loaded`). */
type Loaded = { from: 'request' | 'file' | 'default'; path?: string };

/**
 * The content of a new app: the one given, or the file named, or the default content with player
 * credit off (the demo app alone lets players credit themselves by default), and which.
 */
function contentFrom(req: { content?: AppContent; contentPath?: string }): { content: AppContent; loaded: Loaded } {
  if (req.content) return { content: req.content, loaded: { from: 'request' } };
  try {
    const content = readContentFile(req.contentPath);
    if (req.contentPath) return { content, loaded: { from: 'file', path: req.contentPath } };
    return {
      content: { ...content, players: { ...content.players, player_credit_allowed: false } },
      loaded: { from: 'default', path: DEFAULT_CONTENT_PATH },
    };
  } catch (err) {
    const reason = err instanceof SyntaxError ? 'it is not valid JSON' : err instanceof Error ? err.message : 'it cannot be read';
    throw playerErrors.invalidContent(reason);
  }
}

/**
 * Operator command: creates an app with a publishable and a secret key and its content (the
 * default content when none is given), announced to the other services. Internal NATS only.
 */
export function adminCreateAppEndpoint(d: PlayersDeps) {
  return endpoint(AdminCreateApp, async (req, ctx) => {
    const { content, loaded } = contentFrom(req);
    const created = await withTransaction(d.pool, (tx) => createApp(tx, { name: req.name, content, isDemo: false, withSecretKey: true }, ctx));
    if (!created.secretKey) throw AppError.internal();
    await d.relay.flush().catch((err) => d.log.warn({ err: String(err) }, 'content publish deferred to the relay'));
    d.log.info({ appId: created.appId, name: req.name }, 'app created');
    return { appId: created.appId, publishableKey: created.publishableKey, secretKey: created.secretKey, contentVersion: 1, loaded };
  });
}

/** Operator command: loads a new content version into an app. */
export function adminLoadContentEndpoint(d: PlayersDeps) {
  return endpoint(AdminLoadContent, async (req, ctx) => {
    const version = await loadContent(d.pool, req.appId, req.content, ctx);
    await d.relay.flush().catch((err) => d.log.warn({ err: String(err) }, 'content publish deferred to the relay'));
    d.log.info({ appId: req.appId, version }, 'content loaded');
    return { version };
  });
}
