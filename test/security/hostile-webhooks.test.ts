import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { expectError, expectJsonApi } from '../support/jsonapi-schema.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { createApp, createGuest, sql } from '../../services/chests/test/support/chests.js';

/**
 * Hostile tenants and webhooks (docs/design.md §6, docs/webhooks.md "Destinations" and "What is kept"):
 * a studio cannot point webhooks at the service's own network, cannot read anything back through
 * them, cannot blow the sender up with its answers, and cannot hold another studio's deliveries
 * back. Every target here is on loopback: those the test needs are exempted by
 * WEBHOOK_ALLOW_TARGETS, exactly as the rule allows, and everything else is refused.
 */

/** An HTTP server answering 500 with `Content-Encoding: gzip` and an endless body of gzipped zeros. */
class GzipBomb {
  private server: Server | undefined;
  /** Compressed bytes it managed to hand to the socket before the socket closed. */
  written = 0;
  requests = 0;
  /** Connections the client closed while the body was still coming. */
  cutOff = 0;
  target = '';

  async start(): Promise<this> {
    // 64 MiB of zeros in about 64 KiB; repeated gzip members are still one gzip stream.
    const member = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    this.server = createServer((req, res) => {
      req.resume();
      this.requests++;
      res.writeHead(500, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      let open = true;
      res.on('close', () => {
        if (open) this.cutOff++;
        open = false;
      });
      const pump = () => {
        while (open && !res.destroyed) {
          this.written += member.length;
          if (!res.write(member)) {
            res.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.target = `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe('hostile webhooks', () => {
  let stack: TestStack;
  /** Allowed all along (WEBHOOK_ALLOW_TARGETS). */
  let receiver: WebhookReceiver;
  /** Allowed at registration, then taken off WEBHOOK_ALLOW_TARGETS before anything is sent. */
  let revoked: WebhookReceiver;
  let bomb: GzipBomb;
  let allowTargets: string;

  beforeAll(async () => {
    [receiver, revoked, bomb] = await Promise.all([new WebhookReceiver().start(), new WebhookReceiver().start(), new GzipBomb().start()]);
    const revokedPort = revoked.target.split(':')[1];
    allowTargets = [receiver.target, bomb.target].join(',');
    stack = await startStack({
      env: {
        // Longer than any wait of this file: an attempt that ends ended for another reason.
        WEBHOOK_TIMEOUT_MS: '30000',
        WEBHOOK_POLL_MS: '50',
        WEBHOOK_BACKOFF_BASE_MS: '60000',
        WEBHOOK_CONCURRENCY: '4',
        WEBHOOK_APP_CONCURRENCY: '2',
        WEBHOOK_ALLOW_TARGETS: `${allowTargets},${revoked.target},localhost:${revokedPort}`,
      },
    });
  });
  afterAll(async () => {
    // The receivers first: requests still hanging end (refused) instead of holding the stop.
    await Promise.all([receiver?.close(), revoked?.close(), bomb?.close()]);
    await stack?.close();
  });

  const call = (apiKey: string, method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
    stack.inject({
      method,
      url,
      headers: { accept: 'application/vnd.api+json', apikey: apiKey, ...(body ? { 'content-type': 'application/vnd.api+json' } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });
  const endpointBody = (url: string, events = ['player.registered']) => ({ data: { type: 'webhook_endpoint', attributes: { url, events } } });

  async function addEndpoint(app: { secretKey: string }, url: string): Promise<string> {
    const res = await call(app.secretKey, 'POST', '/api/v1/admin/webhooks', endpointBody(url));
    expect(res.statusCode, res.body).toBe(201);
    expectJsonApi(res.json());
    return res.json().data.id;
  }

  async function deliveries(app: { secretKey: string }, endpointId: string) {
    const res = await call(app.secretKey, 'GET', `/api/v1/admin/webhooks/${endpointId}/deliveries`);
    expect(res.statusCode, res.body).toBe(200);
    const doc = res.json();
    expectJsonApi(doc);
    return doc.data as { id: string; attributes: Record<string, any> }[];
  }

  it('refuses every address of the service’s own network at registration, however it is spelled: 422 webhook_url_forbidden, nothing stored', async () => {
    const app = await createApp(stack);
    const forbidden = [
      'http://127.0.0.1:4998/x',
      'http://localhost:4998/x',
      'http://[::1]:4998/x',
      'http://127.0.0.2:4998/x',
      'http://0.0.0.0:4998/x',
      'http://2130706433:4998/x',
      'http://0x7f000001:4998/x',
      'http://0177.0.0.1:4998/x',
      'http://[::ffff:127.0.0.1]:4998/x',
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/x',
      'http://172.16.5.4/x',
      'http://192.168.1.1/x',
      'http://100.64.0.1/x',
      'http://[fe80::1]/x',
      'http://[fd00::1]/x',
      'http://224.0.0.1/x',
      'http://255.255.255.255/x',
      // A non-canonical spelling of a public address is refused too.
      'http://134744072/x',
      // The receiver's host with another port is not its exemption.
      `http://127.0.0.1:${Number(receiver.target.split(':')[1]) + 1}/x`,
    ];
    for (const url of forbidden) {
      const errors = expectError(await call(app.secretKey, 'POST', '/api/v1/admin/webhooks', endpointBody(url)), 422, 'webhook_url_forbidden');
      expect(errors[0]!.source, url).toEqual({ pointer: '/data/attributes/url' });
      // The answer names the rule, never an address the name resolved to.
      expect(errors[0]!.detail, url).not.toMatch(/127\.0\.0\.1|::1/);
    }
    const listed = await call(app.secretKey, 'GET', '/api/v1/admin/webhooks');
    expect(listed.json().data).toEqual([]);
    expect(await sql(stack, 'SELECT count(*)::int AS n FROM egress.webhook_endpoints WHERE app_id = $1', [app.appId])).toEqual([{ n: 0 }]);

    // A change of URL is checked the same way, and changes nothing.
    const id = await addEndpoint(app, receiver.url('/fine'));
    expectError(
      await call(app.secretKey, 'PATCH', `/api/v1/admin/webhooks/${id}`, endpointBody('http://localhost/steal')),
      422,
      'webhook_url_forbidden',
    );
    expect((await call(app.secretKey, 'GET', '/api/v1/admin/webhooks')).json().data[0].attributes.url).toBe(receiver.url('/fine'));
  });

  it('checks again at every delivery: a destination no longer allowed fails as destination_forbidden and is never connected to', async () => {
    const app = await createApp(stack);
    // Registered while allowed: by address and by a name (localhost) that resolves to loopback.
    const byAddress = await addEndpoint(app, revoked.url('/by-address'));
    const byName = await addEndpoint(app, revoked.url('/by-name').replace('127.0.0.1', 'localhost'));
    // The operator takes the target off the allow-list and restarts the worker.
    await stack.stopService('egress');
    stack.env.WEBHOOK_ALLOW_TARGETS = allowTargets;
    await stack.startService('egress');

    await createGuest(stack, app.publishableKey);
    for (const id of [byAddress, byName]) {
      const [d] = await eventually(async () => {
        const list = await deliveries(app, id);
        expect(list[0]?.attributes.last_error).toBe('destination_forbidden');
        return list;
      }, 10_000);
      expect(d!.attributes).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null, last_error: 'destination_forbidden' });
    }
    expect(revoked.connections).toBe(0);
    expect(revoked.received).toEqual([]);
  });

  it('keeps the status and the error class of an answer, never its body, and reads no more than 1 KiB of it, undecoded', async () => {
    const app = await createApp(stack);
    const id = await addEndpoint(app, `http://${bomb.target}/bomb`);
    await createGuest(stack, app.publishableKey);
    // The body never ends: only a sender that stops reading finishes the attempt before its 30 s deadline.
    const [d] = await eventually(async () => {
      const list = await deliveries(app, id);
      expect(list[0]?.attributes.last_error).toBe('http_500');
      return list;
    }, 10_000);
    expect(d!.attributes).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500, last_error: 'http_500' });
    expect(bomb.requests).toBe(1);
    await eventually(async () => expect(bomb.cutOff).toBe(1));
    // Nothing of the answer is stored anywhere on the delivery.
    const rows = await sql<{ last_error: string }>(stack, 'SELECT last_error FROM egress.webhook_deliveries WHERE endpoint_id = $1', [id]);
    expect(rows).toEqual([{ last_error: 'http_500' }]);
  });

  it('counts an attempt before the request is sent: a worker killed mid-request leaves the delivery one attempt further', async () => {
    const app = await createApp(stack);
    receiver.on('/hang', () => ({ status: 200, delayMs: 120_000 }));
    const id = await addEndpoint(app, receiver.url('/hang'));
    // The worker runs as its own process here, so it can be killed (SIGKILL: no cleanup at all).
    await stack.stopService('egress');
    let child: ChildProcess | undefined;
    try {
      child = spawn(process.execPath, ['--import', 'tsx', '--conditions=development', 'services/egress/src/main.ts'], {
        env: { ...process.env, ...stack.env, HEALTH_PORT: '0', LOG_LEVEL: 'silent' },
        stdio: 'ignore',
      });
      await createGuest(stack, app.publishableKey);
      await eventually(async () => expect(receiver.at('/hang')).toHaveLength(1), 20_000);
      // Mid-request: the attempt is already on the delivery, with its next try and its lease.
      const [inFlight] = await sql<{ attempts: number; status: string; last_error: string | null; claimed: boolean; later: boolean }>(
        stack,
        `SELECT attempts, status, last_error, claimed_until > now() AS claimed, next_attempt_at > now() AS later
           FROM egress.webhook_deliveries WHERE endpoint_id = $1`,
        [id],
      );
      expect(inFlight).toEqual({ attempts: 1, status: 'pending', last_error: null, claimed: true, later: true });
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await stack.startService('egress');
    }
    // Nobody recorded an outcome, yet the attempt stays counted (and the admin API shows it).
    const [d] = await deliveries(app, id);
    expect(d!.attributes).toMatchObject({ status: 'pending', attempts: 1, last_error: null });
  });

  it("shares the sender fairly: one app's endpoint that hangs takes at most its cap, another app's deliveries arrive meanwhile", async () => {
    const slow = await createApp(stack);
    const fast = await createApp(stack);
    receiver.on('/slow', () => ({ status: 200, delayMs: 120_000 }));
    const slowId = await addEndpoint(slow, receiver.url('/slow'));
    await addEndpoint(fast, receiver.url('/fast'));
    // The slow app's six events first (six players: six queues that could all go at once)…
    for (let i = 0; i < 6; i++) await createGuest(stack, slow.publishableKey);
    await eventually(async () => expect(receiver.at('/slow').length).toBeGreaterThanOrEqual(2), 10_000);
    // …then the fast app's three.
    for (let i = 0; i < 3; i++) await createGuest(stack, fast.publishableKey);
    await eventually(async () => expect(receiver.accepted('/fast')).toHaveLength(3), 10_000);
    // All three arrived while the slow app's first requests were still hanging: it never had more
    // than its cap (2) of the four slots, and none of its attempts has ended.
    expect(receiver.at('/slow')).toHaveLength(2);
    const slowDeliveries = await deliveries(slow, slowId);
    expect(slowDeliveries).toHaveLength(6);
    expect(slowDeliveries.filter((d) => d.attributes.attempts === 1)).toHaveLength(2);
    expect(slowDeliveries.every((d) => d.attributes.last_error === null && d.attributes.status === 'pending')).toBe(true);
  });
});
