import { AdminCreateApp } from '@ccs/shared';
import { loadContentFile } from '../content-file.js';
import { describeRollout, waitForRollout } from '../content-rollout.js';
import { adminCall, required, type AdminContext } from '../output.js';

/** What the app got without --content: the players service's default content (the demo's), at the path it read. */
const defaultContent = (path: string | undefined) =>
  `the default (demo) content${path ? `, ${path}` : ''}, with player credit off (--content <file> loads your own)`;

/**
 * `create-app --name <name> [--content <file>] [--wait <s> | --no-wait]`: creates an app with a
 * publishable and a secret key (printed once) and its content (the default content without
 * --content, named with its path as the players service read it), then follows the services
 * applying it. Exit 1 when a running service falls behind.
 */
export async function createAppCommand(c: AdminContext, o: { name?: string; content?: string; waitSeconds: number }): Promise<number> {
  const name = required(o.name, 'name');
  const content = o.content ? loadContentFile(c, o.content) : undefined;
  const app = await c.bus.request(AdminCreateApp, { name, content }, adminCall(), { timeoutMs: 60_000 });
  if (!c.json) {
    c.io.out(
      [
        `App "${name}" created (content version ${app.contentVersion}).`,
        `  content:         ${o.content ?? defaultContent(app.loaded?.path)}`,
        `  app id:          ${app.appId}`,
        `  publishable key: ${app.publishableKey}   (game clients send it in the apikey header)`,
        `  secret key:      ${app.secretKey}   (servers only; shown once, store it now)`,
      ].join('\n'),
    );
  }
  const rollout = o.waitSeconds > 0 ? await waitForRollout(c, app.appId, app.contentVersion, o.waitSeconds) : [];
  if (c.json) c.io.out(JSON.stringify({ name, ...app, services: rollout }, null, 2));
  else if (rollout.length) c.io.progress(`Content ${describeRollout(rollout)}.`);
  return rollout.some((r) => r.status === 'behind') ? 1 : 0;
}
