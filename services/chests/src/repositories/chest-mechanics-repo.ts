import type { AppContent, Queryable, UnlockRules } from '@ccs/shared';
import { chestTypeId } from '@ccs/shared';

/** The key a chest type needs to open, if any. */
export interface RequiredKey {
  currency: string;
  amount: number;
}

/**
 * Stores each chest type's `requires_key` and `unlock` of a content version that became current
 * (in the content consumer's transaction, after applyContentVersion replaced the catalog).
 */
export async function applyChestMechanics(tx: Queryable, appId: string, content: AppContent): Promise<void> {
  for (const ch of content.chests) {
    await tx.query('UPDATE chest_types SET requires_key = $3, unlock = $4 WHERE app_id = $1 AND id = $2', [
      appId,
      chestTypeId(appId, ch.id),
      ch.requires_key ? JSON.stringify(ch.requires_key) : null,
      ch.unlock ? JSON.stringify(ch.unlock satisfies UnlockRules) : null,
    ]);
  }
}
