import type { Queryable, StorePlatform } from '@ccs/shared';

/**
 * Records a store notification as taken by the app (the caller's transaction), once per app:
 * false when the app took it before (a redelivery), and then nothing else may change.
 */
export async function recordNotification(
  tx: Queryable,
  n: { platform: StorePlatform; notificationId: string; appId: string; type: string; transactionId: string | null; outcome: string },
): Promise<boolean> {
  const r = await tx.query(
    `INSERT INTO notifications (platform, notification_id, app_id, type, transaction_id, outcome) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (app_id, platform, notification_id) DO NOTHING`,
    [n.platform, n.notificationId, n.appId, n.type, n.transactionId, n.outcome],
  );
  return (r.rowCount ?? 0) > 0;
}

/** What was done with a notification, once decided (its row was written by this transaction). */
export async function setNotificationOutcome(
  tx: Queryable,
  n: { appId: string; platform: StorePlatform; notificationId: string },
  outcome: string,
): Promise<void> {
  await tx.query('UPDATE notifications SET outcome = $4 WHERE app_id = $1 AND platform = $2 AND notification_id = $3', [
    n.appId,
    n.platform,
    n.notificationId,
    outcome,
  ]);
}
