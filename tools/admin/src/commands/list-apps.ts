import { AdminListApps } from '@ccs/shared';
import { adminCall, type AdminContext } from '../output.js';
import { renderTable } from '../table.js';

/** `list-apps`: every app, oldest first, with its content version, players and live keys. */
export async function listAppsCommand(c: AdminContext): Promise<number> {
  const { apps } = await c.bus.request(AdminListApps, {}, adminCall());
  if (c.json) {
    c.io.out(JSON.stringify({ apps }, null, 2));
    return 0;
  }
  if (!apps.length) {
    c.io.out('No apps yet. Create one with: npm run admin -- create-app --name "My Game"');
    return 0;
  }
  const rows = apps.map((a) => [
    a.appId,
    a.name,
    a.isDemo ? 'yes' : '',
    String(a.contentVersion),
    String(a.players),
    `${a.liveKeys.publishable}/${a.liveKeys.secret}`,
    a.createdAt.slice(0, 16).replace('T', ' '),
  ]);
  for (const line of renderTable(['app id', 'name', 'demo', 'content', 'players', 'keys pk/sk', 'created (utc)'], rows, [3, 4, 5])) c.io.out(line);
  return 0;
}
