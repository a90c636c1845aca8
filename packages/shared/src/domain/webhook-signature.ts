import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that signs a webhook request: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const WEBHOOK_SIGNATURE_HEADER = 'ccs-signature';

/** How far a signature's timestamp may be from the receiver's clock by default: 5 minutes. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** The hex HMAC-SHA256 of `<t>.<body>` under the endpoint's secret. */
export function webhookMac(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}

/** The signature header's value for `body` sent at `t` (unix seconds). */
export function signWebhook(secret: string, t: number, body: string): string {
  return `t=${t},v1=${webhookMac(secret, t, body)}`;
}

export type WebhookVerdict = { ok: true; timestamp: number } | { ok: false; reason: 'malformed' | 'signature_mismatch' | 'outside_tolerance' };

/**
 * Checks a webhook request as a receiver must (docs/webhooks.md): the header's timestamp within
 * `toleranceSeconds` of `now` (replays of an old request are refused), and one of its `v1`
 * signatures (a secret being rotated may add a second) equal, in constant time, to the HMAC of
 * `<t>.<raw body>`. `body` must be the raw bytes received, not re-serialised JSON.
 */
export function verifyWebhook(
  secret: string,
  header: string | undefined,
  body: string,
  opts: { toleranceSeconds?: number; now?: number } = {},
): WebhookVerdict {
  const parts = (header ?? '').split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const signatures = parts.filter(([k, v]) => k === 'v1' && v && /^[0-9a-f]{64}$/.test(v)).map(([, v]) => Buffer.from(v!, 'hex'));
  if (!Number.isInteger(t) || signatures.length === 0) return { ok: false, reason: 'malformed' };
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (opts.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) return { ok: false, reason: 'outside_tolerance' };
  const expected = Buffer.from(webhookMac(secret, t, body), 'hex');
  return signatures.some((s) => timingSafeEqual(s, expected)) ? { ok: true, timestamp: t } : { ok: false, reason: 'signature_mismatch' };
}
