import { AppError, MAX_WEBHOOK_ENDPOINTS } from '@ccs/shared';

/** 404 webhook_not_found: the endpoint is not the app's (or does not exist). */
export const endpointNotFound = () => AppError.notFound('webhook_not_found', 'No such webhook endpoint in this app.', { parameter: 'id' });

/** 404 webhook_delivery_not_found: no such delivery of the app's endpoint. */
export const deliveryNotFound = () =>
  AppError.notFound('webhook_delivery_not_found', 'No such delivery of this webhook endpoint.', { parameter: 'delivery_id' });

/** 409 webhook_limit_reached: the app has MAX_WEBHOOK_ENDPOINTS endpoints already. */
export const webhookLimitReached = () =>
  AppError.conflict('webhook_limit_reached', `An app has at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; remove one first.`);

/** 422 webhook_url_forbidden: the URL leads to an address no webhook may reach; `why` names the rule only. */
export const webhookUrlForbidden = (why: string) =>
  AppError.unprocessable(
    'webhook_url_forbidden',
    `url may not lead to a loopback, private, link-local, shared, multicast or reserved address: ${why}. Webhooks go to public addresses only.`,
    { pointer: '/data/attributes/url' },
  );
