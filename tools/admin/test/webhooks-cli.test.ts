import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { AdminCreateApp, type Logger } from '@ccs/shared';
import { startStack, type TestStack } from '../../../test/support/stack.js';
import { runAdminIn } from './support/run-admin.js';
import { WebhookSender } from '../../../services/egress/src/workers/sender.js';
import { EgressConfigSchema } from '../../../services/egress/src/config.js';

/** Webhooks from the admin command line (`npm run admin -- webhooks …`), and how long deliveries are kept. */
describe('webhooks: admin command line and retention', () => {
  let stack: TestStack;
  let appId: string;
  let otherAppId: string;

  beforeAll(async () => {
    stack = await startStack({ services: ['players', 'egress'] });
    const ctx = { requestId: 'webhooks-cli' };
    [appId, otherAppId] = (
      await Promise.all([stack.bus.request(AdminCreateApp, { name: 'Hooked' }, ctx), stack.bus.request(AdminCreateApp, { name: 'Other' }, ctx)])
    ).map((a) => a.appId);
  });
  afterAll(async () => stack?.close());

  const admin = (...argv: string[]) => runAdminIn(stack, argv);

  it('adds, lists, changes, lists deliveries of and removes an endpoint; the secret is printed once', async () => {
    const added = await admin(
      'add-webhook',
      '--app',
      appId,
      '--url',
      'https://hooks.example.com/a',
      '--events',
      'chest.opened,currency.credited',
      '--json',
    );
    expect(added.code, added.err).toBe(0);
    const { endpoint, secret } = JSON.parse(added.out);
    expect(secret).toMatch(/^whsec_/);
    expect(endpoint.events).toEqual(['chest.opened', 'currency.credited']);

    const listed = await admin('webhooks', '--app', appId);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(endpoint.id);
    expect(listed.out).toContain('https://hooks.example.com/a');
    expect(listed.out).not.toContain(secret);
    expect((await admin('webhooks', '--app', otherAppId)).out).toContain('No webhook endpoints');

    const off = await admin('update-webhook', '--app', appId, '--webhook', endpoint.id, '--disable', '--events', 'all', '--rotate-secret');
    expect(off.code, off.err).toBe(0);
    expect(off.out).toMatch(/New signing secret .*whsec_/);
    const now = JSON.parse((await admin('webhooks', '--app', appId, '--json')).out).endpoints[0];
    expect(now).toMatchObject({ enabled: false, events: [] });

    const none = await admin('webhook-deliveries', '--app', appId, '--webhook', endpoint.id, '--status', 'parked');
    expect(none.out).toContain('0 deliveries parked');

    // Another app's endpoint is not found; wrong usage says what to do.
    const foreign = await admin('remove-webhook', '--app', otherAppId, '--webhook', endpoint.id);
    expect(foreign.code).toBe(1);
    expect(foreign.err).toContain('No such webhook endpoint');
    for (const argv of [
      ['add-webhook', '--app', appId, '--url', 'ftp://x'],
      ['add-webhook', '--app', appId, '--url', 'https://x.example', '--events', 'chest.exploded'],
      ['update-webhook', '--app', appId, '--webhook', endpoint.id],
      ['webhook-deliveries', '--app', appId, '--webhook', endpoint.id, '--status', 'lost'],
      ['retry-delivery', '--app', appId, '--webhook', endpoint.id],
    ]) {
      const r = await admin(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
    }
    const unknownApp = await admin('add-webhook', '--app', '00000000-0000-4000-8000-000000000000', '--url', 'https://x.example');
    expect(unknownApp.code).toBe(1);
    expect(unknownApp.err).toContain('list-apps');

    expect((await admin('remove-webhook', '--app', appId, '--webhook', endpoint.id)).code).toBe(0);
    expect((await admin('webhooks', '--app', appId)).out).toContain('No webhook endpoints');
  });

  it('keeps delivered deliveries for WEBHOOK_KEEP_DELIVERED_HOURS, and pending or parked ones until they are settled', async () => {
    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    try {
      const added = JSON.parse((await admin('add-webhook', '--app', appId, '--url', 'https://hooks.example.com/kept', '--disabled', '--json')).out);
      const endpointId = added.endpoint.id as string;
      const events = ['aaaaaaaa-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000003'];
      for (const id of events)
        await db.query(`INSERT INTO egress.webhook_events (id, app_id, type, occurred_at, body) VALUES ($1, $2, 'chest.opened', now(), '{}')`, [
          id,
          appId,
        ]);
      await db.query(
        `INSERT INTO egress.webhook_deliveries (endpoint_id, event_id, status, delivered_at) VALUES
           ($1, $2, 'delivered', now() - interval '8 days'), ($1, $3, 'delivered', now() - interval '1 hour'), ($1, $4, 'parked', NULL)`,
        [endpointId, ...events],
      );
      const silent = { info: () => undefined, warn: () => undefined } as unknown as Logger;
      const sender = new WebhookSender(stack.services.egress!.deps.pool, EgressConfigSchema.parse({ ...stack.env }), silent);
      expect(await sender.cleanup()).toBe(1);
      const left = await db.query<{ event_id: string; status: string }>(
        'SELECT event_id, status FROM egress.webhook_deliveries WHERE endpoint_id = $1 ORDER BY event_id',
        [endpointId],
      );
      expect(left.rows).toEqual([
        { event_id: events[1], status: 'delivered' },
        { event_id: events[2], status: 'parked' },
      ]);
      const kept = await db.query<{ id: string }>('SELECT id FROM egress.webhook_events WHERE id = ANY($1::uuid[]) ORDER BY id', [events]);
      expect(kept.rows.map((r) => r.id)).toEqual(events.slice(1));
    } finally {
      await db.end();
    }
  });
});
