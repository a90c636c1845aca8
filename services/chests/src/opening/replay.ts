import type { Pool } from '@ccs/shared';
import { chestErrors } from '../errors.js';
import { findBatch } from '../repositories/batch-repo.js';
import { findOpeningByKey, listOpeningsByIds } from '../repositories/openings-repo.js';
import type { OpenCommand, Opened } from './open-chests.js';

/**
 * The key an opening is stored under: the client's Idempotency-Key, else the gateway's retry key
 * (`retry:<uuid>`, made for one HTTP request: a repeat of that request opens nothing twice).
 */
export const openingKeyOf = (req: { idempotencyKey?: string; retryKey?: string }): string | undefined =>
  req.idempotencyKey ?? (req.retryKey ? `retry:${req.retryKey}` : undefined);

/**
 * The openings the command's Idempotency-Key made before, if it opened these same chests (a retry,
 * maybe concurrent); 409 `idempotency_key_reused` when it opened others. A single open's key is
 * stored on its opening, a batch's with its chests in `opening_batches`.
 */
export async function replayOf(
  pool: Pool,
  cmd: Pick<OpenCommand, 'appId' | 'playerId' | 'chestIds' | 'kind' | 'idempotencyKey'>,
): Promise<Opened | undefined> {
  if (!cmd.idempotencyKey) return undefined;
  if (cmd.kind === 'one') {
    const first = await findOpeningByKey(pool, cmd.appId, cmd.playerId, cmd.idempotencyKey);
    if (!first) return undefined;
    if (first.chestId !== cmd.chestIds[0]) throw chestErrors.idempotencyKeyReused();
    return { openings: [first], replayed: true };
  }
  const batch = await findBatch(pool, cmd.appId, cmd.playerId, cmd.idempotencyKey);
  if (!batch) return undefined;
  if (batch.chestIds.join() !== cmd.chestIds.join()) throw chestErrors.batchKeyReused();
  return { openings: await listOpeningsByIds(pool, cmd.appId, cmd.playerId, batch.openingIds), replayed: true };
}
