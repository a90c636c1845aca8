import { type Queryable, type ReplyOf, type AdminRotateKeys } from '@ccs/shared';
import { newSecret } from '../credentials/secrets.js';
import { insertApiKey, liveKeyKinds, retireApiKeys, type KeyKind } from '../repositories/api-keys-repo.js';
import { lockApp } from '../repositories/apps-repo.js';
import { playerErrors } from '../errors.js';

/**
 * Rotates an app's keys in the caller's transaction: for each kind (by default every kind the app
 * has live keys of; publishable when it has none), schedules the live keys to stop working after
 * `graceSeconds` and issues one new key. The new keys exist in clear only in the answer.
 */
export async function rotateKeys(
  tx: Queryable,
  cmd: { appId: string; kinds?: KeyKind[]; graceSeconds: number },
): Promise<ReplyOf<typeof AdminRotateKeys>> {
  // Locks the app row: two rotations of one app run one after the other.
  if (!(await lockApp(tx, cmd.appId))) throw playerErrors.noApp(cmd.appId);
  const live = await liveKeyKinds(tx, cmd.appId);
  const kinds = cmd.kinds ?? (live.length ? live : (['publishable'] as KeyKind[]));
  const keys: { kind: KeyKind; key: string }[] = [];
  const retired: ReplyOf<typeof AdminRotateKeys>['retired'] = [];
  for (const kind of [...new Set(kinds)].sort()) {
    retired.push(...(await retireApiKeys(tx, cmd.appId, kind, cmd.graceSeconds)));
    const key = newSecret(kind === 'publishable' ? 'pk' : 'sk');
    await insertApiKey(tx, cmd.appId, kind, key);
    keys.push({ kind, key });
  }
  return { appId: cmd.appId, keys, retired };
}
