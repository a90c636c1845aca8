import type { Pool } from '@ccs/shared';
import { chestErrors } from '../errors.js';
import { findOpeningKey, listOpeningsByIds } from '../repositories/openings-repo.js';
import type { OpenCommand, Opened } from './open-chests.js';

/**
 * The key an opening is stored under: the client's Idempotency-Key, else the gateway's retry key
 * (`retry:<uuid>`, made for one HTTP request: a repeat of that request opens nothing twice).
 */
export const openingKeyOf = (req: { idempotencyKey?: string; retryKey?: string }): string | undefined =>
  req.idempotencyKey ?? (req.retryKey ? `retry:${req.retryKey}` : undefined);

/**
 * The openings the command's Idempotency-Key made before, if it opened these same chests (a retry,
 * maybe concurrent); 409 `idempotency_key_reused` when it opened others. Every opening's key is
 * stored in `opening_keys`, under its kind (a single open's keys and a batch's are apart). A key
 * whose openings the retention sweeper deleted replays nothing.
 */
export async function replayOf(
  pool: Pool,
  cmd: Pick<OpenCommand, 'appId' | 'playerId' | 'chestIds' | 'kind' | 'idempotencyKey'>,
): Promise<Opened | undefined> {
  if (!cmd.idempotencyKey) return undefined;
  const first = await findOpeningKey(pool, cmd.appId, cmd.playerId, { kind: cmd.kind, value: cmd.idempotencyKey });
  if (!first) return undefined;
  if (first.chestIds.join() !== cmd.chestIds.join()) throw cmd.kind === 'batch' ? chestErrors.batchKeyReused() : chestErrors.idempotencyKeyReused();
  const openings = await listOpeningsByIds(pool, cmd.appId, cmd.playerId, first.openingIds);
  return openings.length === first.openingIds.length ? { openings, replayed: true } : undefined;
}
