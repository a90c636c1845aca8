import type { Queryable, StorePlatform } from '@ccs/shared';

/**
 * Records a store notification as taken (the caller's transaction), once: false when it was taken
 * before (a redelivery), and then nothing else may change.
 */
export async function recordNotification(
  tx: Queryable,
  n: { platform: StorePlatform; notificationId: string; appId: string; type: string; transactionId: string | null; outcome: string },
): Promise<boolean> {
  const r = await tx.query(
    `INSERT INTO notifications (platform, notification_id, app_id, type, transaction_id, outcome) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (platform, notification_id) DO NOTHING`,
    [n.platform, n.notificationId, n.appId, n.type, n.transactionId, n.outcome],
  );
  return (r.rowCount ?? 0) > 0;
}

/** What was done with a notification, once decided (its row was written by this transaction). */
export async function setNotificationOutcome(tx: Queryable, platform: StorePlatform, notificationId: string, outcome: string): Promise<void> {
  await tx.query('UPDATE notifications SET outcome = $3 WHERE platform = $1 AND notification_id = $2', [platform, notificationId, outcome]);
}
