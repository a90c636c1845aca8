import { AppError, AppleStoreNotification, endpoint, GoogleStoreNotification, type CallContext } from '@ccs/shared';
import {
  APPLE_CLAWBACK_NOTIFICATIONS,
  APPLE_REGRANT_NOTIFICATIONS,
  AppleNotificationSchema,
  AppleTransactionSchema,
  type AppleTrust,
} from '../apple/index.js';
import type { StoreDeps } from '../deps.js';
import { storeErrors } from '../errors.js';
import { decodePushBody, type GooglePlay } from '../google/index.js';
import { verifiedPayload } from '../purchases/apple-purchase.js';
import { googleTransactionId } from '../purchases/google-purchase.js';
import { applyNotice, type StoreNotice } from '../refunds/apply-notice.js';

const CLAWBACK: readonly string[] = APPLE_CLAWBACK_NOTIFICATIONS;
const REGRANT: readonly string[] = APPLE_REGRANT_NOTIFICATIONS;

/** A verified JWS's payload; any refusal of a notification's signature is 401 `notification_invalid`. */
const appleNotificationPart = (jws: string, trust: AppleTrust) => verifiedPayload(jws, trust, storeErrors.notificationInvalid);

/**
 * store.v1.apple_notification (POST /api/v1/stores/apple/notifications/{app_id}): an App Store
 * Server Notification V2, its signedPayload verified like a transaction (chain, OIDs, signature;
 * else 401 and nothing changes), then its bundle and environment against the app's. REFUND and
 * REVOKE take back what the transaction granted, REFUND_REVERSED grants it again; each
 * notificationUUID once (refunds/apply-notice.ts). Other types are acknowledged and change nothing.
 */
export function appleNotificationEndpoint(deps: StoreDeps, trust: AppleTrust) {
  return endpoint(AppleStoreNotification, async (req, ctx: CallContext) => {
    const snapshot = await deps.content.current(req.appId);
    if (!snapshot) throw storeErrors.appNotFound();
    const apple = snapshot.store?.apple;
    if (!apple) throw storeErrors.notConfigured("the app's content has no store.apple section");
    const parsed = AppleNotificationSchema.safeParse(await appleNotificationPart(req.signedPayload, trust));
    if (!parsed.success) throw storeErrors.notificationInvalid('its payload is not an App Store Server Notification V2');
    const n = parsed.data;
    if (n.data && n.data.bundleId !== apple.bundle_id) throw storeErrors.receiptWrongApp('apple', `bundle ${n.data.bundleId}`);
    if (n.data && n.data.environment !== apple.environment) throw storeErrors.receiptWrongEnvironment(n.data.environment, apple.environment);
    const kind = CLAWBACK.includes(n.notificationType) ? 'refund' : REGRANT.includes(n.notificationType) ? 'reversal' : 'none';
    const notice: StoreNotice = {
      platform: 'apple',
      notificationId: n.notificationUUID,
      type: n.notificationType,
      kind,
      eventAt: new Date(n.signedDate),
    };
    if (kind !== 'none') {
      const t = AppleTransactionSchema.safeParse(await appleNotificationPart(n.data!.signedTransactionInfo!, trust));
      if (!t.success) throw storeErrors.notificationInvalid('its signedTransactionInfo is not an App Store transaction');
      if (t.data.bundleId !== apple.bundle_id) throw storeErrors.receiptWrongApp('apple', `bundle ${t.data.bundleId}`);
      notice.transactionId = t.data.transactionId;
      notice.storeProductId = t.data.productId;
    }
    return { outcome: await applyNotice(deps, req.appId, notice, { ...ctx, appId: req.appId }) };
  });
}

/**
 * store.v1.google_notification (POST /api/v1/stores/google/notifications/{app_id}): a real-time
 * developer notification pushed by Pub/Sub, authenticated by the push's OIDC token (Google's keys,
 * the audience and service account the app's store.google.notifications names; else 401). A
 * voided one-time purchase takes back what it granted, once per orderId; others are acknowledged.
 */
export function googleNotificationEndpoint(deps: StoreDeps, google: GooglePlay) {
  return endpoint(GoogleStoreNotification, async (req, ctx: CallContext) => {
    const snapshot = await deps.content.current(req.appId);
    if (!snapshot) throw storeErrors.appNotFound();
    const settings = snapshot.store?.google;
    if (!settings?.notifications)
      throw storeErrors.notificationInvalid("the app's content names no store.google.notifications to check the push against");
    const verdict = await google.push.verify(req.authorization, {
      audience: settings.notifications.audience,
      serviceAccountEmail: settings.notifications.service_account_email,
    });
    if (!verdict.ok && verdict.refusal.reason === 'unavailable') throw storeErrors.unavailable(30);
    if (!verdict.ok) throw storeErrors.notificationInvalid(verdict.refusal.detail);
    const decoded = decodePushBody(req.body);
    if (!decoded.ok)
      throw AppError.unprocessable('notification_malformed', `The push's message is not a developer notification: ${decoded.error.detail}.`, {
        pointer: '/message/data',
      });
    const n = decoded.notification;
    if (n.packageName !== settings.package_name) throw storeErrors.receiptWrongApp('google', `package ${n.packageName}`);
    const e = n.event;
    const notice: StoreNotice =
      e.kind === 'voided_purchase' && e.productType !== 1
        ? {
            platform: 'google',
            notificationId: `voided:${googleTransactionId(e.orderId, e.purchaseToken)}`,
            type: 'voided',
            kind: 'refund',
            transactionId: googleTransactionId(e.orderId, e.purchaseToken),
            eventAt: new Date(n.eventTimeMillis),
          }
        : { platform: 'google', notificationId: `message:${n.messageId}`, type: e.kind, kind: 'none', eventAt: new Date(n.eventTimeMillis) };
    return { outcome: await applyNotice(deps, req.appId, notice, { ...ctx, appId: req.appId }) };
  });
}
