import { z } from 'zod';

/**
 * Real-time developer notifications, as Pub/Sub pushes them: a JSON body {message: {data,
 * messageId, publishTime, attributes?}, subscription} whose `data` is the base64 of a
 * DeveloperNotification {version, packageName, eventTimeMillis, and exactly one of
 * oneTimeProductNotification, subscriptionNotification, voidedPurchaseNotification,
 * testNotification (or a kind Google adds later)}.
 */

/** Pub/Sub's push request body (the wrapped form; its snake_case duplicates are ignored). */
export const PushBodySchema = z.object({
  message: z.object({
    data: z.string().max(65_536),
    messageId: z.string().min(1).max(256),
    publishTime: z.string().max(64).optional(),
    attributes: z.record(z.string(), z.string()).optional(),
  }),
  subscription: z.string().min(1).max(512),
});

const Int64 = z.union([z.string().regex(/^\d{1,16}$/), z.number().int().nonnegative()]).transform((v) => Number(v));

/** A one-time product was voided (refunded, charged back or cancelled): what the store claws back. */
export const VoidedPurchaseNotificationSchema = z.object({
  purchaseToken: z.string().min(1).max(4096),
  orderId: z.string().min(1).max(256),
  /** 1 subscription, 2 one-time product. */
  productType: z.number().int().optional(),
  /** 1 full refund, 2 quantity-based partial refund. */
  refundType: z.number().int().optional(),
});

export const OneTimeProductNotificationSchema = z.object({
  version: z.string().optional(),
  /** 1 purchased, 2 canceled (a pending purchase that was not paid). */
  notificationType: z.number().int(),
  purchaseToken: z.string().min(1).max(4096),
  sku: z.string().max(256).optional(),
});

export const SubscriptionNotificationSchema = z.object({
  version: z.string().optional(),
  notificationType: z.number().int(),
  purchaseToken: z.string().min(1).max(4096),
  subscriptionId: z.string().max(256).optional(),
});

export const TestNotificationSchema = z.object({ version: z.string().optional() });

/** The decoded `data`: the envelope strictly, the one notification it carries by its own schema. */
export const DeveloperNotificationSchema = z.object({
  version: z.string().max(16),
  packageName: z.string().min(1).max(256),
  eventTimeMillis: Int64,
  voidedPurchaseNotification: VoidedPurchaseNotificationSchema.optional(),
  oneTimeProductNotification: OneTimeProductNotificationSchema.optional(),
  subscriptionNotification: SubscriptionNotificationSchema.optional(),
  testNotification: TestNotificationSchema.optional(),
});

/** What a notification is about; `other` for a kind this service does not know (acknowledge and ignore it). */
export type NotificationEvent =
  | ({ kind: 'voided_purchase' } & z.infer<typeof VoidedPurchaseNotificationSchema>)
  | ({ kind: 'one_time_product' } & z.infer<typeof OneTimeProductNotificationSchema>)
  | ({ kind: 'subscription' } & z.infer<typeof SubscriptionNotificationSchema>)
  | { kind: 'test' }
  | { kind: 'other' };

export interface DeveloperNotification {
  /** Pub/Sub's message id (unique within the topic; a redelivery repeats it). */
  messageId: string;
  publishTime: string | undefined;
  subscription: string;
  version: string;
  packageName: string;
  eventTimeMillis: number;
  event: NotificationEvent;
}

/** Why a push body was refused: not Pub/Sub's shape, `data` not base64, not JSON, or not a DeveloperNotification. */
export type NotificationError = { reason: 'bad_push' | 'bad_base64' | 'bad_json' | 'bad_notification'; detail: string };

export type DecodedNotification = { ok: true; notification: DeveloperNotification } | { ok: false; error: NotificationError };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function refuse(reason: NotificationError['reason'], detail: string): DecodedNotification {
  return { ok: false, error: { reason, detail } };
}

function eventOf(n: z.infer<typeof DeveloperNotificationSchema>): NotificationEvent | undefined {
  const present = [
    n.voidedPurchaseNotification && ({ kind: 'voided_purchase', ...n.voidedPurchaseNotification } as const),
    n.oneTimeProductNotification && ({ kind: 'one_time_product', ...n.oneTimeProductNotification } as const),
    n.subscriptionNotification && ({ kind: 'subscription', ...n.subscriptionNotification } as const),
    n.testNotification && ({ kind: 'test' } as const),
  ].filter((e) => e !== undefined);
  if (present.length > 1) return undefined;
  return present[0] ?? { kind: 'other' };
}

/** Decodes a Pub/Sub push body into the DeveloperNotification it carries. Never throws. */
export function decodePushBody(body: unknown): DecodedNotification {
  const push = PushBodySchema.safeParse(body);
  if (!push.success) return refuse('bad_push', 'not a Pub/Sub push body {message: {data, messageId}, subscription}');
  const { data, messageId, publishTime } = push.data.message;
  if (!BASE64.test(data)) return refuse('bad_base64', 'message.data is not base64');
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(data, 'base64').toString('utf8'));
  } catch {
    return refuse('bad_json', 'message.data is not JSON');
  }
  const parsed = DeveloperNotificationSchema.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues[0]?.path.map(String).join('.') || 'the notification';
    return refuse('bad_notification', `not a DeveloperNotification (${where})`);
  }
  const event = eventOf(parsed.data);
  if (!event) return refuse('bad_notification', 'more than one notification in one message');
  const { version, packageName, eventTimeMillis } = parsed.data;
  return { ok: true, notification: { messageId, publishTime, subscription: push.data.subscription, version, packageName, eventTimeMillis, event } };
}
