import { createHmac } from 'node:crypto';

/** The header that signs a webhook request: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const WEBHOOK_SIGNATURE_HEADER = 'ccs-signature';

/** The hex HMAC-SHA256 of `<t>.<body>` under the endpoint's secret. */
export function webhookMac(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}

/** The signature header's value for `body` sent at `t` (unix seconds); receivers check it with `verifyWebhook` of `@ccs/client/webhooks`. */
export function signWebhook(secret: string, t: number, body: string): string {
  return `t=${t},v1=${webhookMac(secret, t, body)}`;
}
