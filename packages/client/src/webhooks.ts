import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * For a studio's backend that receives the service's webhooks (docs/webhooks.md): the signature
 * check and the shape of the events. Server-side only (node:crypto); import it as
 * `@ccs/client/webhooks`.
 */

/** The header that signs a webhook request: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const WEBHOOK_SIGNATURE_HEADER = 'ccs-signature';

/** How far a signature's timestamp may be from the receiver's clock by default: 5 minutes. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export type WebhookVerdict = { ok: true; timestamp: number } | { ok: false; reason: 'malformed' | 'signature_mismatch' | 'outside_tolerance' };

/**
 * Checks a webhook request: the header's timestamp within `toleranceSeconds` of `now` (a replay
 * of an old request is refused), and one of its `v1` signatures (a secret being rotated may add a
 * second) equal, in constant time, to HMAC-SHA256 of `<t>.<raw body>` under the endpoint's secret.
 * `rawBody` must be the bytes received, not re-serialised JSON.
 */
export function verifyWebhook(
  secret: string,
  header: string | undefined,
  rawBody: string,
  opts: { toleranceSeconds?: number; now?: number } = {},
): WebhookVerdict {
  const parts = (header ?? '').split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const signatures = parts.filter(([k, v]) => k === 'v1' && v && /^[0-9a-f]{64}$/.test(v)).map(([, v]) => Buffer.from(v!, 'hex'));
  if (!Number.isInteger(t) || signatures.length === 0) return { ok: false, reason: 'malformed' };
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (opts.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) return { ok: false, reason: 'outside_tolerance' };
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  return signatures.some((s) => timingSafeEqual(s, expected)) ? { ok: true, timestamp: t } : { ok: false, reason: 'signature_mismatch' };
}

/** The body of every webhook request. `id` is the event id: de-duplicate on it (delivery is at least once). */
export interface WebhookEventBody<T extends string = string, D = Record<string, unknown>> {
  id: string;
  type: T;
  /** When the fact happened (ISO 8601 UTC). */
  created_at: string;
  app_id: string;
  data: D;
}

type Iso = string;
/** The events, by type, with their data (docs/webhooks.md). */
export type WebhookEvent =
  | WebhookEventBody<'player.registered', { player_id: string; email: string | null; is_anonymous: boolean; registered_at: Iso }>
  | WebhookEventBody<
      'chest.purchased',
      { player_id: string; inventory_chest_id: string; chest_type_id: string; price: { currency: string; amount: string }; purchased_at: Iso }
    >
  | WebhookEventBody<
      'chest.opened',
      {
        player_id: string;
        opening_id: string;
        chest_type_id: string;
        opened_at: Iso;
        items: { slot: number; collectible_id: string; collection_id: string; rarity: string }[];
      }
    >
  | WebhookEventBody<
      'collection.completed',
      { player_id: string; collection_id: string; completed_at: Iso; reward: { currencies?: Record<string, number>; chests?: string[] } | null }
    >
  | WebhookEventBody<
      'currency.credited',
      { player_id: string; currency: string; amount: string; reason: string; reference: string | null; credited_at: Iso }
    >
  | WebhookEventBody<
      'banner.pulled',
      {
        player_id: string;
        banner_id: string;
        opening_id: string;
        chest_type_id: string;
        featured: boolean;
        guaranteed_before: boolean;
        items: { collectible_id: string; rarity: string }[];
        opened_at: Iso;
      }
    >
  | WebhookEventBody<'banner.sparked', { player_id: string; banner_id: string; exchange_id: string; collectible_id: string; exchanged_at: Iso }>;

/**
 * Verifies a request and returns its event, or throws with the reason (answer 400 then): the
 * usual first lines of a webhook handler.
 */
export function parseWebhook(
  secret: string,
  header: string | undefined,
  rawBody: string,
  opts?: { toleranceSeconds?: number; now?: number },
): WebhookEvent {
  const verdict = verifyWebhook(secret, header, rawBody, opts);
  if (!verdict.ok) throw new Error(`webhook refused: ${verdict.reason}`);
  return JSON.parse(rawBody) as WebhookEvent;
}
