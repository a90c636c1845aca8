/**
 * Prometheus metrics, read the way Prometheus reads them: the gateway's GET /metrics, a service's
 * /metrics on its HTTP health port (real HTTP), the others' registries rendered the same way.
 * The in-process stack gives every service the same HEALTH_PORT, so the first one binds it and
 * the other three must run on without it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { headers as natsHeaders } from 'nats';
import { createLogger, OpeningGranted, prefixed } from '@ccs/shared';
import { eventually, startStack, type ServiceName, type TestStack } from '../support/stack.js';
import {
  catalogIds,
  credit,
  open,
  purchase,
  registerPlayer,
  sql,
  waitForStarterChest,
  wallet,
  type Player,
} from '../../services/chests/test/support/chests.js';
import { parseSamples, valueOf } from './support/prometheus-text.js';
import { GatewayConfigSchema } from '../../services/gateway/src/config.js';
import { startGateway } from '../../services/gateway/src/server.js';
import { freePort } from '@ccs/shared/testing';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const logLines: { name: string; msg: string; port?: number }[] = [];
let stack: TestStack;
let healthPort: number;
let player: Player;
let openingId: string;

const gatewayMetrics = async () => {
  const res = await stack.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.body;
};
const serviceMetrics = async (name: ServiceName) => (await stack.services[name]!.deps.metrics.render()).body;

beforeAll(async () => {
  healthPort = await freePort();
  const sink = { write: (s: string) => void logLines.push(JSON.parse(s)) };
  // The chests relay only publishes on demand here, so an outbox row inserted by the test stays put.
  stack = await startStack({
    env: { HEALTH_PORT: String(healthPort), OUTBOX_INTERVAL_MS: '60000' },
    logger: (name) => createLogger(name, 'info', sink),
  });
  player = await registerPlayer(stack);
  await waitForStarterChest(stack, player);
  const res = await open(stack, player, player.starterChestId);
  expect(res.statusCode, res.body).toBe(200);
  openingId = res.json().meta.opening_id;
});
afterAll(async () => stack?.close());

describe('metrics', () => {
  it('a service whose health port is taken says so in one line and runs on without it', async () => {
    await eventually(async () => {
      const taken = logLines.filter((l) => /health server cannot listen/.test(l.msg));
      expect(taken.map((l) => l.name).sort()).toEqual(['chests', 'collections', 'egress', 'store', 'wallet']);
      expect(taken.every((l) => l.port === healthPort)).toBe(true);
    }, 5000);
    for (const name of ['players', 'wallet', 'chests', 'collections', 'egress', 'store'] as const) expect(stack.services[name]).toBeDefined();
    const live = await fetch(`http://127.0.0.1:${healthPort}/livez`);
    expect(live.status).toBe(200);
  });

  it('the gateway counts requests by route pattern, method and status, times its NATS calls, and has the process metrics', async () => {
    expect((await stack.inject({ method: 'GET', url: `/api/v1/nothing-here/${randomUUID()}`, headers: { apikey: stack.apiKey } })).statusCode).toBe(
      404,
    );
    const text = await gatewayMetrics();
    const open = { route: '/api/v1/chests/:id/open', method: 'GET', status: '200', service: 'gateway' };
    expect(valueOf(text, 'ccs_http_requests_total', open)).toBe(1);
    expect(valueOf(text, 'ccs_http_request_duration_seconds_count', open)).toBe(1);
    expect(valueOf(text, 'ccs_http_requests_total', { route: '/api/v1/players/register', method: 'POST', status: '201' })).toBe(1);
    expect(valueOf(text, 'ccs_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    // Never a raw URL (an id per series would grow without bound).
    const http = parseSamples(text).filter((s) => s.name.startsWith('ccs_http_'));
    expect(http.length).toBeGreaterThan(0);
    expect(http.filter((s) => UUID.test(s.labels.route ?? ''))).toEqual([]);
    expect(valueOf(text, 'ccs_nats_request_duration_seconds_count', { subject: 'chests.v1.open', outcome: 'ok', service: 'gateway' })).toBe(1);
    expect(valueOf(text, 'ccs_process_cpu_user_seconds_total', { service: 'gateway' })).toBeGreaterThan(0);
    expect(valueOf(text, 'ccs_nodejs_heap_size_used_bytes', { service: 'gateway' })).toBeGreaterThan(0);
    // Every series carries the service label.
    expect(parseSamples(text).filter((s) => s.labels.service !== 'gateway')).toEqual([]);
  });

  it('a service serves /metrics on its health port: handlers, registration saga, pool, outbox', async () => {
    const res = await fetch(`http://127.0.0.1:${healthPort}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const register = { subject: 'players.v1.register', outcome: 'ok', service: 'players' };
    expect(valueOf(text, 'ccs_nats_handler_requests_total', register)).toBe(1);
    expect(valueOf(text, 'ccs_nats_handler_duration_seconds_count', register)).toBe(1);
    expect(valueOf(text, 'ccs_saga_outcomes_total', { saga: 'registration', outcome: 'completed' })).toBe(1);
    expect(valueOf(text, 'ccs_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, 'ccs_db_pool_connections', { state: 'idle' })).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'ccs_db_pool_connections', { state: 'waiting' })).toBe(0);
    expect(valueOf(text, 'ccs_outbox_backlog', { service: 'players' })).toBe(0);
    expect(valueOf(text, 'ccs_outbox_oldest_age_seconds', { service: 'players' })).toBe(0);
    await eventually(async () => {
      const again = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
      expect(valueOf(again, 'ccs_consumer_messages_total', { consumer: 'players-experience', outcome: 'applied' })).toBe(1);
    });
  });

  it('chests counts the opening and purchase sagas, its handlers by outcome and its calls to the wallet by outcome', async () => {
    expect((await open(stack, player, player.starterChestId)).statusCode).toBe(403);
    const ids = await catalogIds(stack);
    expect((await purchase(stack, player, ids['Wooden Chest']!, 'coins')).statusCode).toBe(201);
    expect((await purchase(stack, player, ids['Wooden Chest']!, 'coins', 10)).statusCode).toBe(409);

    const text = await serviceMetrics('chests');
    expect(valueOf(text, 'ccs_saga_outcomes_total', { saga: 'opening', outcome: 'opened', service: 'chests' })).toBe(1);
    expect(valueOf(text, 'ccs_saga_outcomes_total', { saga: 'opening', outcome: 'granted' })).toBe(1);
    expect(valueOf(text, 'ccs_saga_outcomes_total', { saga: 'opening', outcome: 'grant_pending' })).toBeUndefined();
    expect(valueOf(text, 'ccs_saga_outcomes_total', { saga: 'purchase', outcome: 'completed' })).toBe(1);
    expect(valueOf(text, 'ccs_saga_outcomes_total', { saga: 'purchase', outcome: 'failed' })).toBe(1);
    expect(valueOf(text, 'ccs_nats_handler_requests_total', { subject: 'chests.v1.open', outcome: 'ok' })).toBe(1);
    expect(valueOf(text, 'ccs_nats_handler_requests_total', { subject: 'chests.v1.open', outcome: 'forbidden' })).toBe(1);
    expect(valueOf(text, 'ccs_nats_request_duration_seconds_count', { subject: 'wallet.v1.debit', outcome: 'ok' })).toBe(1);
    expect(valueOf(text, 'ccs_nats_request_duration_seconds_count', { subject: 'wallet.v1.debit', outcome: 'error' })).toBe(1);
    expect(valueOf(text, 'ccs_consumer_messages_total', { consumer: 'chests-grants', outcome: 'applied' })).toBe(1);
  });

  it('the outbox backlog and the age of its oldest message are read from the table on each scrape', async () => {
    await sql(
      stack,
      `INSERT INTO chests.outbox (id, subject, payload, created_at) VALUES ($1, 'grants.test.metrics', '{}', now() - interval '1 hour')`,
      [randomUUID()],
    );
    // The earlier tests' messages are published at once but marked so a moment later (one statement
    // per pass): until then they count too, so each scrape is asked again until they are.
    await eventually(async () => {
      const text = await serviceMetrics('chests');
      expect(valueOf(text, 'ccs_outbox_backlog', { service: 'chests' })).toBe(1);
      expect(valueOf(text, 'ccs_outbox_oldest_age_seconds', { service: 'chests' })).toBeGreaterThanOrEqual(3600);
    });
    await sql(stack, `UPDATE chests.outbox SET published_at = now() WHERE subject = 'grants.test.metrics'`);
    await eventually(async () => {
      const after = await serviceMetrics('chests');
      expect(valueOf(after, 'ccs_outbox_backlog', { service: 'chests' })).toBe(0);
      expect(valueOf(after, 'ccs_outbox_oldest_age_seconds', { service: 'chests' })).toBe(0);
    });
  });

  it('consumers count a redelivered grant as duplicate and an unreadable one as parked', async () => {
    const [row] = await sql<{ payload: unknown }>(stack, 'SELECT payload FROM chests.outbox WHERE id = $1', [openingId]);
    const js = stack.nc.jetstream();
    const subject = prefixed(stack.env.NATS_PREFIX!, OpeningGranted.subject);
    const h = natsHeaders();
    h.set('ccs-request-id', 'metrics-test-redelivery');
    await js.publish(subject, new TextEncoder().encode(JSON.stringify(row!.payload)), { msgID: randomUUID(), headers: h });
    await js.publish(subject, new TextEncoder().encode('{"not":"a grant"}'), { msgID: randomUUID(), headers: h });
    await eventually(async () => {
      const text = await serviceMetrics('collections');
      expect(valueOf(text, 'ccs_consumer_messages_total', { consumer: 'collections-openings', outcome: 'applied' })).toBe(1);
      expect(valueOf(text, 'ccs_consumer_messages_total', { consumer: 'collections-openings', outcome: 'duplicate' })).toBe(1);
      expect(valueOf(text, 'ccs_consumer_messages_total', { consumer: 'collections-openings', outcome: 'parked' })).toBe(1);
    });
  });

  it('egress acks the grants of an app without webhook endpoints unread (skipped), and decodes the others', async () => {
    // The demo app has no endpoint: its openings' grants are skipped from their headers alone.
    await eventually(async () => {
      const text = await serviceMetrics('egress');
      expect(valueOf(text, 'ccs_consumer_messages_total', { consumer: 'egress-webhook-openings', outcome: 'skipped' })).toBeGreaterThanOrEqual(1);
    });
  });

  it('the gateway tells a service that is not running (no_responders) from one that answered', async () => {
    const coins = (await wallet(stack, player)).coins!;
    await credit(stack, player, coins.id, '1.00');
    await stack.stopService('wallet');
    const res = await stack.inject({
      method: 'POST',
      url: `/api/v1/currencies/${coins.id}/credit`,
      headers: { apikey: player.apiKey, authorization: `Bearer ${player.token}`, 'content-type': 'application/json' },
      payload: { amount: '1.00' },
    });
    expect(res.statusCode).toBe(503);
    const text = await gatewayMetrics();
    expect(valueOf(text, 'ccs_nats_request_duration_seconds_count', { subject: 'wallet.v1.credit', outcome: 'ok' })).toBe(1);
    expect(valueOf(text, 'ccs_nats_request_duration_seconds_count', { subject: 'wallet.v1.credit', outcome: 'no_responders' })).toBe(1);
    expect(valueOf(text, 'ccs_http_requests_total', { route: '/api/v1/currencies/:currency_id/credit', status: '503' })).toBe(1);
  });

  it('with METRICS_PORT the gateway serves /metrics only there, never on its public port', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const config = GatewayConfigSchema.parse({ ...stack.env, PORT: String(port), METRICS_PORT: String(metricsPort), HOST: '127.0.0.1' });
    const gateway = await startGateway(config, createLogger('gateway', 'silent'));
    try {
      const publicRes = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(publicRes.status).toBe(404);
      expect(publicRes.headers.get('content-type')).toContain('application/vnd.api+json');
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(valueOf(text, 'ccs_http_requests_total', { route: '/healthz', method: 'GET', status: '200' })).toBe(1);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/api/v1/chests`)).status).toBe(404);
    } finally {
      await gateway.close();
    }
  });
});
