import { AdminLoadContent } from '@ccs/shared';
import { loadContentFile } from '../content-file.js';
import { describeRollout, waitForRollout } from '../content-rollout.js';
import { adminCall, required, requiredAppId, type AdminContext } from '../output.js';

/**
 * `load-content --app <id> --file <file> [--wait <s> | --no-wait]`: validates the file locally
 * (every failing field named), stores it as the app's next content version, then shows each
 * service acknowledging that version. Exit 1 when a running service has not applied it in time.
 */
export async function loadContentCommand(c: AdminContext, o: { app?: string; file?: string; waitSeconds: number }): Promise<number> {
  const appId = requiredAppId(o.app);
  const file = required(o.file, 'file');
  const content = loadContentFile(c, file);
  c.io.progress(`Loading into app ${appId}…`);
  const { version } = await c.bus.request(AdminLoadContent, { appId, content }, adminCall(), { timeoutMs: 60_000 });
  c.io.progress(`  ${'players'.padEnd(12)} stored version ${version}`);
  const rollout = o.waitSeconds > 0 ? await waitForRollout(c, appId, version, o.waitSeconds) : [];
  if (c.json) {
    c.io.out(JSON.stringify({ appId, file, version, services: rollout }, null, 2));
  } else {
    const tail = rollout.length ? describeRollout(rollout) : 'every service applies it shortly';
    c.io.out(`Content of ${file} loaded into app ${appId} as version ${version}; ${tail}.`);
  }
  return rollout.some((r) => r.status === 'behind') ? 1 : 0;
}
