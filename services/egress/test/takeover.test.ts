import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { AdminCreateApp, AdminListWebhookDeliveries, AdminListWebhooks } from '@ccs/shared';
import { startStack, type TestStack } from '../../../test/support/stack.js';

/** The webhook tables as an older players created them in its schema. */
const PLAYERS_WEBHOOK_TABLES = fileURLToPath(new URL('./fixtures/players-webhook-tables.sql', import.meta.url));

/**
 * Upgrading from players sending webhooks: the egress worker's first migration moves players'
 * webhook tables into its schema with their rows, and rewrites the texts players stored in
 * last_error ("HTTP 500: <the receiver's answer>", "ECONNREFUSED: … 10.0.0.7:80") to error classes.
 */
describe('egress takes over the webhooks players kept', () => {
  let stack: TestStack;
  let appId: string;
  const endpointId = 'aaaaaaaa-0000-4000-8000-00000000e001';
  const events = [1, 2, 3, 4, 5].map((n) => `aaaaaaaa-0000-4000-8000-00000000f00${n}`);

  beforeAll(async () => {
    // As before the upgrade: players alone, with the webhook tables an older players made, filled.
    stack = await startStack({ services: ['players'] });
    appId = (await stack.bus.request(AdminCreateApp, { name: 'Upgraded' }, { requestId: 'takeover' })).appId;
    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL, options: '-c search_path=players' });
    await db.connect();
    try {
      await db.query(await readFile(PLAYERS_WEBHOOK_TABLES, 'utf8'));
      await db.query(
        `INSERT INTO players.webhook_endpoints (id, app_id, url, secret) VALUES ($1, $2, 'https://hooks.example.com/old', 'whsec_old1')`,
        [endpointId, appId],
      );
      const errors = [
        'HTTP 500: <html>internal admin panel of 10.0.0.7, password=hunter2</html>',
        'no answer within 10000 ms',
        'ECONNREFUSED: connect ECONNREFUSED 10.0.0.7:80',
        'UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate',
        'something nobody recognises',
      ];
      for (const [i, id] of events.entries()) {
        await db.query(`INSERT INTO players.webhook_events (id, app_id, type, occurred_at, body) VALUES ($1, $2, 'chest.opened', now(), '{}')`, [
          id,
          appId,
        ]);
        await db.query(
          `INSERT INTO players.webhook_deliveries (endpoint_id, event_id, status, attempts, last_status_code, last_error, created_at)
           VALUES ($1, $2, 'parked', 3, $3, $4, now() - make_interval(secs => $5))`,
          [endpointId, id, i === 0 ? 500 : null, errors[i], 10 - i],
        );
      }
    } finally {
      await db.end();
    }
    await stack.startService('egress');
  });
  afterAll(async () => stack?.close());

  it('moves the endpoints, events and deliveries into the egress schema, with error classes only', async () => {
    const ctx = { requestId: 'takeover', appId };
    const { endpoints } = await stack.bus.request(AdminListWebhooks, { appId }, ctx);
    expect(endpoints.map((e) => ({ id: e.id, url: e.url, secretHint: e.secretHint, deliveries: e.deliveries }))).toEqual([
      { id: endpointId, url: 'https://hooks.example.com/old', secretHint: 'whsec_…old1', deliveries: { pending: 0, delivered: 0, parked: 5 } },
    ]);
    const { deliveries } = await stack.bus.request(AdminListWebhookDeliveries, { appId, endpointId, page: { limit: 10, offset: 0 } }, ctx);
    // Newest first: the order they were inserted in, reversed.
    expect(deliveries.map((d) => [d.eventId, d.lastStatusCode, d.lastError]).reverse()).toEqual([
      [events[0], 500, 'http_500'],
      [events[1], null, 'timeout'],
      [events[2], null, 'refused'],
      [events[3], null, 'tls'],
      [events[4], null, null],
    ]);
    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    try {
      const left = await db.query(`SELECT to_regclass('players.webhook_deliveries') AS players, to_regclass('egress.webhook_deliveries') AS egress`);
      expect(left.rows[0]).toEqual({ players: null, egress: 'egress.webhook_deliveries' });
      // From now on only a class can be stored.
      await expect(db.query(`UPDATE egress.webhook_deliveries SET last_error = 'HTTP 500: body' WHERE event_id = $1`, [events[0]])).rejects.toThrow(
        /webhook_deliveries_error_class/,
      );
    } finally {
      await db.end();
    }
  });
});
