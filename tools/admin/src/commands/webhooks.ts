import {
  AdminCreateWebhook,
  AdminDeleteWebhook,
  AdminListApps,
  AdminListWebhookDeliveries,
  AdminListWebhooks,
  AdminRetryWebhookDelivery,
  AdminUpdateWebhook,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
  WebhookUrlSchema,
  type WebhookDeliveryView,
  type WebhookEndpointView,
  type WebhookEventType,
} from '@ccs/shared';
import { AdminFailure, adminCall, required, requiredAppId, UsageError, type AdminContext } from '../output.js';
import { renderTable } from '../table.js';

/** Webhook endpoints and deliveries from the command line (docs/webhooks.md), the same subjects as the admin API. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuidOption(value: string | undefined, flag: string): string {
  const v = required(value, flag);
  if (!UUID.test(v)) throw new UsageError(`--${flag} takes an id (a UUID, as \`webhooks --app <id>\` shows), not "${v}"`);
  return v.toLowerCase();
}

/** `--events a,b` (or `all`): known event types only. */
function eventsOption(value: string | undefined): WebhookEventType[] | undefined {
  if (value === undefined) return undefined;
  if (value === 'all' || value === '') return [];
  const events = value.split(',').map((s) => s.trim());
  const unknown = events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length) throw new UsageError(`--events takes ${WEBHOOK_EVENT_TYPES.join(', ')} (comma-separated) or all, not "${unknown.join(',')}"`);
  return events as WebhookEventType[];
}

function urlOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!WebhookUrlSchema.safeParse(value).success)
    throw new UsageError(`--url takes an absolute http(s) URL without user or password, not "${value}"`);
  return value;
}

const describeEndpoint = (e: WebhookEndpointView) => [
  e.id,
  e.enabled ? 'on' : 'off',
  e.url,
  e.events.length ? e.events.join(',') : 'all',
  String(e.deliveries.pending),
  String(e.deliveries.delivered),
  String(e.deliveries.parked),
];

function printEndpoints(c: AdminContext, endpoints: WebhookEndpointView[]): void {
  if (endpoints.length === 0) {
    c.io.out('No webhook endpoints. Add one with: npm run admin -- add-webhook --app <app id> --url https://…');
    return;
  }
  for (const line of renderTable(['id', 'enabled', 'url', 'events', 'pending', 'delivered', 'parked'], endpoints.map(describeEndpoint), [4, 5, 6]))
    c.io.out(line);
}

/** The egress worker keeps no apps: a new endpoint's app is looked up in players first. */
async function assertAppExists(c: AdminContext, appId: string): Promise<void> {
  const { apps } = await c.bus.request(AdminListApps, {}, adminCall(), { timeoutMs: 5000 });
  if (!apps.some((a) => a.appId.toLowerCase() === appId.toLowerCase()))
    throw new AdminFailure(`No app ${appId}. List the apps with: npm run admin -- list-apps`);
}

/** `webhooks --app <id>`: the app's endpoints with their deliveries by status. */
export async function listWebhooksCommand(c: AdminContext, o: { app?: string }): Promise<number> {
  const appId = requiredAppId(o.app);
  const { endpoints } = await c.bus.request(AdminListWebhooks, { appId }, adminCall(), { timeoutMs: 5000 });
  if (c.json) c.io.out(JSON.stringify({ appId, endpoints }, null, 2));
  else printEndpoints(c, endpoints);
  return 0;
}

/** `add-webhook --app <id> --url <url> [--events a,b|all] [--description text] [--disabled]`: the secret is printed once. */
export async function addWebhookCommand(
  c: AdminContext,
  o: { app?: string; url?: string; events?: string; description?: string; disabled?: boolean },
): Promise<number> {
  const appId = requiredAppId(o.app);
  const url = urlOption(required(o.url, 'url'))!;
  const events = eventsOption(o.events);
  await assertAppExists(c, appId);
  const r = await c.bus.request(
    AdminCreateWebhook,
    { appId, url, ...(events ? { events } : {}), ...(o.description !== undefined ? { description: o.description } : {}), enabled: !o.disabled },
    adminCall(),
    { timeoutMs: 5000 },
  );
  if (c.json) {
    c.io.out(JSON.stringify({ appId, endpoint: r.endpoint, secret: r.secret }, null, 2));
    return 0;
  }
  printEndpoints(c, [r.endpoint]);
  c.io.out(`Signing secret (shown once; verify each request with it, docs/webhooks.md): ${r.secret}`);
  return 0;
}

/** `update-webhook --app <id> --webhook <id> [--url] [--events] [--description] [--enable|--disable] [--rotate-secret]`. */
export async function updateWebhookCommand(
  c: AdminContext,
  o: {
    app?: string;
    webhook?: string;
    url?: string;
    events?: string;
    description?: string;
    enable?: boolean;
    disable?: boolean;
    'rotate-secret'?: boolean;
  },
): Promise<number> {
  const appId = requiredAppId(o.app);
  const endpointId = uuidOption(o.webhook, 'webhook');
  if (o.enable && o.disable) throw new UsageError('--enable and --disable together: choose one');
  const url = urlOption(o.url);
  const events = eventsOption(o.events);
  const changes = {
    ...(url ? { url } : {}),
    ...(events ? { events } : {}),
    ...(o.description !== undefined ? { description: o.description } : {}),
    ...(o.enable ? { enabled: true } : o.disable ? { enabled: false } : {}),
    ...(o['rotate-secret'] ? { rotateSecret: true } : {}),
  };
  if (Object.keys(changes).length === 0)
    throw new UsageError('nothing to change: give --url, --events, --description, --enable, --disable or --rotate-secret');
  const r = await c.bus.request(AdminUpdateWebhook, { appId, endpointId, ...changes }, adminCall(), { timeoutMs: 5000 });
  if (c.json) {
    c.io.out(JSON.stringify({ appId, endpoint: r.endpoint, ...(r.secret ? { secret: r.secret } : {}) }, null, 2));
    return 0;
  }
  printEndpoints(c, [r.endpoint]);
  if (r.secret) c.io.out(`New signing secret (shown once; the old one no longer signs): ${r.secret}`);
  return 0;
}

/** `remove-webhook --app <id> --webhook <id>`: the endpoint and its deliveries. */
export async function removeWebhookCommand(c: AdminContext, o: { app?: string; webhook?: string }): Promise<number> {
  const appId = requiredAppId(o.app);
  const endpointId = uuidOption(o.webhook, 'webhook');
  await c.bus.request(AdminDeleteWebhook, { appId, endpointId }, adminCall(), { timeoutMs: 5000 });
  c.io.out(c.json ? JSON.stringify({ appId, removed: endpointId }) : `Removed webhook endpoint ${endpointId} and its deliveries.`);
  return 0;
}

const describeDelivery = (d: WebhookDeliveryView) => [
  d.createdAt.replace('T', ' ').slice(0, 19),
  d.id,
  d.eventType,
  d.status,
  String(d.attempts),
  d.lastStatusCode === null ? '-' : String(d.lastStatusCode),
  (d.lastError ?? '-').slice(0, 60),
];

/** `webhook-deliveries --app <id> --webhook <id> [--status pending|delivered|parked] [--limit 20] [--offset 0]`. */
export async function webhookDeliveriesCommand(
  c: AdminContext,
  o: { app?: string; webhook?: string; status?: string; limit?: string; offset?: string },
): Promise<number> {
  const appId = requiredAppId(o.app);
  const endpointId = uuidOption(o.webhook, 'webhook');
  if (o.status !== undefined && !(WEBHOOK_DELIVERY_STATUSES as readonly string[]).includes(o.status))
    throw new UsageError(`--status takes ${WEBHOOK_DELIVERY_STATUSES.join(', ')}, not "${o.status}"`);
  const limit = o.limit === undefined ? 20 : Number(o.limit);
  const offset = o.offset === undefined ? 0 : Number(o.offset);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError(`--limit takes a whole number from 1 to 100, not "${o.limit}"`);
  if (!Number.isInteger(offset) || offset < 0) throw new UsageError(`--offset takes a whole number from 0, not "${o.offset}"`);
  const status = o.status as (typeof WEBHOOK_DELIVERY_STATUSES)[number] | undefined;
  const r = await c.bus.request(
    AdminListWebhookDeliveries,
    { appId, endpointId, page: { limit, offset }, ...(status ? { status } : {}) },
    adminCall(),
    { timeoutMs: 5000 },
  );
  if (c.json) {
    c.io.out(JSON.stringify({ appId, endpointId, total: r.total, deliveries: r.deliveries }, null, 2));
    return 0;
  }
  c.io.out(`${r.total} deliver${r.total === 1 ? 'y' : 'ies'}${status ? ` ${status}` : ''}, newest first`);
  if (r.deliveries.length === 0) return 0;
  for (const line of renderTable(
    ['created (UTC)', 'delivery', 'event', 'status', 'attempts', 'http', 'last error'],
    r.deliveries.map(describeDelivery),
    [4],
  ))
    c.io.out(line);
  if (r.deliveries.some((d) => d.status === 'parked'))
    c.io.out('Retry a parked delivery with: npm run admin -- retry-delivery --app <app id> --webhook <id> --delivery <id>');
  return 0;
}

/** `retry-delivery --app <id> --webhook <id> --delivery <id>`: due now, with a new 24 h window. */
export async function retryDeliveryCommand(c: AdminContext, o: { app?: string; webhook?: string; delivery?: string }): Promise<number> {
  const appId = requiredAppId(o.app);
  const endpointId = uuidOption(o.webhook, 'webhook');
  const deliveryId = uuidOption(o.delivery, 'delivery');
  const r = await c.bus.request(AdminRetryWebhookDelivery, { appId, endpointId, deliveryId }, adminCall(), { timeoutMs: 5000 });
  c.io.out(c.json ? JSON.stringify({ appId, delivery: r.delivery }, null, 2) : `Delivery ${deliveryId} is due now (status ${r.delivery.status}).`);
  return 0;
}
