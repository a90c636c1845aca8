import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { domainEventId } from '@ccs/shared';
import { parseWebhook, verifyWebhook } from '@ccs/client/webhooks';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { expectError, expectJsonApi } from '../support/jsonapi-schema.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { catalogIds, createApp, grantChests, open, registerPlayer, type Player } from '../../services/chests/test/support/chests.js';

/**
 * Signed webhooks end to end (docs/webhooks.md): endpoints managed through the admin API, events
 * fanned out from the durable stream, POSTed to a real local HTTP server, signed, retried with
 * backoff after 500s and timeouts, parked after the retry window and retried by hand, and nothing
 * lost across a restart of the sender. Backoff and windows are shortened for the test.
 */
describe('webhooks', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let game: { appId: string; publishableKey: string; secretKey: string };
  let other: { appId: string; publishableKey: string; secretKey: string };

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    stack = await startStack({
      env: {
        WEBHOOK_TIMEOUT_MS: '400',
        WEBHOOK_BACKOFF_BASE_MS: '100',
        WEBHOOK_BACKOFF_MAX_MS: '400',
        WEBHOOK_RETRY_WINDOW_MS: '2500',
        WEBHOOK_POLL_MS: '50',
        // The receiver is on loopback: the one exemption from the destination rules.
        WEBHOOK_ALLOW_TARGETS: receiver.target,
      },
    });
    [game, other] = await Promise.all([createApp(stack), createApp(stack)]);
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, apiKey = game.secretKey) =>
    stack.inject({
      method,
      url,
      headers: { accept: 'application/vnd.api+json', apikey: apiKey, ...(body ? { 'content-type': 'application/vnd.api+json' } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });

  async function addEndpoint(path: string, attributes: Record<string, unknown> = {}, apiKey = game.secretKey) {
    const res = await call(
      'POST',
      '/api/v1/admin/webhooks',
      { data: { type: 'webhook_endpoint', attributes: { url: receiver.url(path), ...attributes } } },
      apiKey,
    );
    expect(res.statusCode, res.body).toBe(201);
    const doc = res.json();
    expectJsonApi(doc);
    return { id: doc.data.id as string, secret: doc.data.attributes.secret as string };
  }

  async function deliveries(endpointId: string, query = '') {
    const res = await call('GET', `/api/v1/admin/webhooks/${endpointId}/deliveries${query}`);
    expect(res.statusCode, res.body).toBe(200);
    const doc = res.json();
    expectJsonApi(doc);
    return doc.data as { id: string; attributes: Record<string, any> }[];
  }

  /** A player of the game with `n` silver chests opened; their opening ids, in order. */
  async function playerWithOpenings(n: number): Promise<{ player: Player; openings: string[] }> {
    const player = await registerPlayer(stack, game.publishableKey);
    const chests = await grantChests(stack, player, 'silver-chest', n);
    const openings: string[] = [];
    for (const chestId of chests) {
      const res = await open(stack, player, chestId);
      expect(res.statusCode, res.body).toBe(200);
      openings.push(res.json().meta.opening_id);
    }
    return { player, openings };
  }

  const openedBy = (path: string, playerId: string) =>
    receiver.accepted(path).filter((r) => r.body.type === 'chest.opened' && r.body.data.player_id === playerId);

  it('manages endpoints with the secret key only; the secret is shown once; every change is audited', async () => {
    const { id, secret } = await addEndpoint('/crud', { events: ['chest.opened', 'chest.opened', 'collection.completed'], description: 'analytics' });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const listed = (await call('GET', '/api/v1/admin/webhooks')).json();
    expectJsonApi(listed);
    const mine = listed.data.find((e: { id: string }) => e.id === id);
    expect(mine.attributes).toMatchObject({
      url: receiver.url('/crud'),
      description: 'analytics',
      events: ['chest.opened', 'collection.completed'],
      enabled: true,
    });
    expect(mine.attributes.secret).toBeUndefined();
    expect(mine.attributes.secret_hint).toBe(`whsec_…${secret.slice(-4)}`);

    const patched = await call('PATCH', `/api/v1/admin/webhooks/${id}`, {
      data: { type: 'webhook_endpoint', attributes: { enabled: false, rotate_secret: true } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data.attributes.enabled).toBe(false);
    expect(patched.json().data.attributes.secret).toMatch(/^whsec_/);
    expect(patched.json().data.attributes.secret).not.toBe(secret);

    // Bad input: 422 with a pointer, nothing created.
    for (const attributes of [
      { url: 'ftp://x.example' },
      { url: 'https://u:p@x.example' },
      { url: receiver.url('/x'), events: ['chest.exploded'] },
      { url: receiver.url('/x'), colour: 'red' },
    ]) {
      const res = await call('POST', '/api/v1/admin/webhooks', { data: { type: 'webhook_endpoint', attributes } });
      expectError(res, 422);
    }
    expect((await call('GET', '/api/v1/admin/webhooks')).json().data).toHaveLength(listed.data.length);

    // Another app's key never reaches it; a publishable key is refused.
    expectError(
      await call('PATCH', `/api/v1/admin/webhooks/${id}`, { data: { type: 'webhook_endpoint', attributes: { enabled: true } } }, other.secretKey),
      404,
      'webhook_not_found',
    );
    expectError(await call('GET', `/api/v1/admin/webhooks/${id}/deliveries`, undefined, other.secretKey), 404, 'webhook_not_found');
    expectError(await call('DELETE', `/api/v1/admin/webhooks/${id}`, undefined, other.secretKey), 404, 'webhook_not_found');
    expect((await call('GET', '/api/v1/admin/webhooks', undefined, other.secretKey)).json().data).toEqual([]);
    expectError(await call('GET', '/api/v1/admin/webhooks', undefined, game.publishableKey), 403, 'secret_key_required');
    expectError(await call('GET', '/api/v1/admin/webhooks/not-a-uuid/deliveries'), 404, 'webhook_not_found');

    expect((await call('DELETE', `/api/v1/admin/webhooks/${id}`)).statusCode).toBe(204);
    expectError(await call('DELETE', `/api/v1/admin/webhooks/${id}`), 404, 'webhook_not_found');

    await eventually(async () => {
      const audit = (await call('GET', '/api/v1/admin/audit?page[limit]=100'))
        .json()
        .data.map((e: { attributes: { action: string } }) => e.attributes.action);
      expect(audit).toEqual(
        expect.arrayContaining(['POST /api/v1/admin/webhooks', 'PATCH /api/v1/admin/webhooks/{id}', 'DELETE /api/v1/admin/webhooks/{id}']),
      );
      // Reads are not recorded.
      expect(audit).not.toContain('GET /api/v1/admin/webhooks/{id}/deliveries');
    });
  });

  it('signs every request: t=…,v1=HMAC-SHA256(secret, "<t>.<body>"), with the event id in the body and headers', async () => {
    const { id: endpointId, secret } = await addEndpoint('/signed', { events: ['chest.opened'] });
    const { player, openings } = await playerWithOpenings(1);
    const [got] = await eventually(async () => {
      const r = openedBy('/signed', player.id);
      expect(r).toHaveLength(1);
      return r;
    });
    const header = String(got!.headers['ccs-signature']);
    const [, t, v1] = header.match(/^t=(\d+),v1=([0-9a-f]{64})$/) ?? [];
    // Seconds of the signing time (not milliseconds, not zero); generous for a busy machine.
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(300);
    // Computed here independently of the service's code.
    expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${got!.raw}`).digest('hex'));
    expect(verifyWebhook(secret, header, got!.raw)).toEqual({ ok: true, timestamp: Number(t) });
    expect(verifyWebhook(secret, header, got!.raw.replace('chest.opened', 'chest.opened '))).toMatchObject({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(verifyWebhook('whsec_other', header, got!.raw)).toMatchObject({ ok: false, reason: 'signature_mismatch' });
    expect(verifyWebhook(secret, header, got!.raw, { now: Number(t) + 301 })).toMatchObject({ ok: false, reason: 'outside_tolerance' });
    expect(verifyWebhook(secret, `${header},v1=${'0'.repeat(64)}`, got!.raw).ok).toBe(true);
    const event = parseWebhook(secret, header, got!.raw);
    expect(event.type === 'chest.opened' && event.data.opening_id).toBe(openings[0]);
    expect(() => parseWebhook('whsec_other', header, got!.raw)).toThrow('signature_mismatch');

    expect(got!.body).toMatchObject({ id: domainEventId('chest.opened', openings[0]!), type: 'chest.opened', app_id: game.appId });
    const catalog = await catalogIds(stack, game.publishableKey);
    const silver = Object.entries(catalog).find(([name]) => /silver/i.test(name))![1];
    expect(got!.body.data).toMatchObject({ player_id: player.id, opening_id: openings[0], chest_type_id: silver });
    expect((got!.body.data.items as unknown[]).length).toBeGreaterThan(0);
    expect(got!.headers['ccs-event-id']).toBe(got!.body.id);
    expect(got!.headers['ccs-event-type']).toBe('chest.opened');
    expect(got!.headers['content-type']).toBe('application/json');

    const [d] = await eventually(async () => {
      const list = await deliveries(endpointId);
      expect(list[0]?.attributes.status).toBe('delivered');
      return list;
    });
    expect(d!.attributes).toMatchObject({
      event_id: got!.body.id,
      event_type: 'chest.opened',
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      body: got!.raw,
    });
  });

  it('retries after 500s and timeouts with backoff until a 2xx, the same event each time', async () => {
    receiver.on('/flaky', ({ attempt }) => (attempt === 1 ? { status: 500 } : attempt === 2 ? { status: 200, delayMs: 1200 } : { status: 200 }));
    const { id: endpointId } = await addEndpoint('/flaky', { events: ['chest.opened'] });
    const { player, openings } = await playerWithOpenings(1);
    const eventId = domainEventId('chest.opened', openings[0]!);
    const [d] = await eventually(async () => {
      const list = await deliveries(endpointId, '?filter[status]=delivered');
      expect(list).toHaveLength(1);
      return list;
    }, 15_000);
    expect(d!.attributes.attempts).toBe(3);
    const tries = receiver.at('/flaky').filter((r) => r.body.id === eventId);
    // The 500, the answer that came too late (the sender had given up on it), the success.
    expect(tries.map((r) => r.answered)).toEqual([500, 200, 200]);
    expect(new Set(tries.map((r) => r.raw)).size).toBe(1);
    expect(tries.map((r) => r.headers['ccs-delivery-attempt'])).toEqual(['1', '2', '3']);
    // Backoff: the first retry came at least the base delay (less jitter) after the 500; the next
    // one after the timeout (400 ms) and the doubled delay.
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(70);
    expect(tries[2]!.at - tries[1]!.at).toBeGreaterThanOrEqual(400 + 150);
    expect(openedBy('/flaky', player.id).length).toBeGreaterThanOrEqual(1);
  });

  it('parks a delivery after its retry window, shows why, and sends it again on retry', async () => {
    let healthy = false;
    receiver.on('/down', () => ({ status: healthy ? 200 : 503 }));
    const { id: endpointId } = await addEndpoint('/down', { events: ['chest.opened'] });
    await playerWithOpenings(1);
    const [parked] = await eventually(async () => {
      const list = await deliveries(endpointId, '?filter[status]=parked');
      expect(list).toHaveLength(1);
      return list;
    }, 15_000);
    expect(parked!.attributes).toMatchObject({ status: 'parked', last_status_code: 503, next_attempt_at: null });
    expect(parked!.attributes.last_error).toBe('http_503');
    expect(parked!.attributes.attempts).toBeGreaterThanOrEqual(2);
    const listed = (await call('GET', '/api/v1/admin/webhooks')).json().data.find((e: { id: string }) => e.id === endpointId);
    expect(listed.attributes.deliveries).toEqual({ pending: 0, delivered: 0, parked: 1 });

    // Parked stays parked (no more attempts) until someone retries it.
    const before = receiver.at('/down').length;
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.at('/down').length).toBe(before);

    healthy = true;
    const retried = await call('POST', `/api/v1/admin/webhooks/${endpointId}/deliveries/${parked!.id}/retry`);
    expect(retried.statusCode, retried.body).toBe(202);
    expectJsonApi(retried.json());
    await eventually(async () => expect((await deliveries(endpointId))[0]!.attributes.status).toBe('delivered'));
    expect(receiver.accepted('/down')).toHaveLength(1);
    // The egress worker's metrics count the attempts by outcome and show the backlog.
    const metrics = (await stack.services.egress!.deps.metrics.render()).body;
    for (const outcome of ['delivered', 'retried', 'parked'])
      expect(
        Number(metrics.match(new RegExp(`ccs_webhook_attempts_total\\{[^}]*outcome="${outcome}"[^}]*\\} (\\d+)`))?.[1] ?? 0),
        outcome,
      ).toBeGreaterThan(0);
    expect(metrics).toMatch(/ccs_webhook_deliveries\{[^}]*status="parked"[^}]*\} \d+/);
    expectError(
      await call('POST', `/api/v1/admin/webhooks/${endpointId}/deliveries/${parked!.id}/retry`, undefined, other.secretKey),
      404,
      'webhook_delivery_not_found',
    );
  });

  it('loses nothing across a restart of the sender: events wait in the stream, deliveries in the database', async () => {
    let up = false;
    receiver.on('/restart', () => ({ status: up ? 200 : 503 }));
    const { id: endpointId } = await addEndpoint('/restart', { events: ['chest.opened'] });
    const first = await playerWithOpenings(2);
    const chests = await grantChests(stack, first.player, 'silver-chest', 2);
    // Delivered to nobody yet: the receiver fails.
    await eventually(async () => expect((await deliveries(endpointId)).length).toBe(2));
    await stack.stopService('egress');
    // While egress (the sender) is down, more chests are opened: their events wait in JetStream.
    for (const c of chests) expect((await open(stack, first.player, c)).statusCode).toBe(200);
    up = true;
    await stack.startService('egress');
    await eventually(async () => {
      const ids = new Set(openedBy('/restart', first.player.id).map((r) => r.body.id));
      expect(ids.size).toBe(4);
    }, 20_000);
    await eventually(async () => expect((await deliveries(endpointId, '?filter[status]=delivered')).length).toBe(4));
  });

  it("an app's first endpoint gets the events from its creation on, though egress had skipped the app's grants before", async () => {
    const late = await createApp(stack);
    const player = await registerPlayer(stack, late.publishableKey);
    const [before, after] = await grantChests(stack, player, 'silver-chest', 2);
    expect((await open(stack, player, before!)).statusCode).toBe(200);
    // No endpoint yet: egress acks the grant unread and remembers that the app takes no events.
    const skipped = async () =>
      Number(
        /ccs_consumer_messages_total\{[^}]*consumer="egress-webhook-openings"[^}]*outcome="skipped"[^}]*\} (\d+)/.exec(
          (await stack.services.egress!.deps.metrics.render()).body,
        )?.[1] ?? 0,
      );
    await eventually(async () => expect(await skipped()).toBeGreaterThan(0));
    await addEndpoint('/late', {}, late.secretKey);
    const opened = (await open(stack, player, after!)).json().meta.opening_id as string;
    await eventually(async () => expect(receiver.accepted('/late').map((r) => r.body.data.opening_id)).toContain(opened));
    expect(receiver.accepted('/late').filter((r) => r.body.type === 'chest.opened')).toHaveLength(1);
  });

  it('filters by event type, and a disabled endpoint gets nothing', async () => {
    const { id: completedOnly } = await addEndpoint('/completed-only', { events: ['collection.completed'] });
    const { id: disabled } = await addEndpoint('/disabled', { enabled: false });
    const { player } = await playerWithOpenings(2);
    const { id: all } = await addEndpoint('/all');
    await playerWithOpenings(1);
    await eventually(async () => expect((await deliveries(all)).length).toBeGreaterThanOrEqual(1));
    expect(openedBy('/completed-only', player.id)).toEqual([]);
    expect(await deliveries(completedOnly)).toEqual([]);
    expect(await deliveries(disabled)).toEqual([]);
    expect(receiver.at('/disabled')).toEqual([]);
  });

  it("sends one player's events in order while the receiver answers; a retried event may come after newer ones", async () => {
    const player = await registerPlayer(stack, game.publishableKey);
    await addEndpoint('/ordered', { events: ['chest.opened'] });
    const openOne = async (chestId: string) => (await open(stack, player, chestId)).json().meta.opening_id as string;
    const made: string[] = [];
    for (const c of await grantChests(stack, player, 'silver-chest', 4)) made.push(await openOne(c));
    await eventually(async () => expect(openedBy('/ordered', player.id)).toHaveLength(4));
    expect(openedBy('/ordered', player.id).map((r) => r.body.data.opening_id)).toEqual(made);

    // Not guaranteed under failure: the first event to arrive fails until a later one got through.
    let first: string | undefined;
    receiver.on('/unordered', ({ eventId }) => {
      first ??= eventId;
      return { status: eventId === first && receiver.accepted('/unordered').length === 0 ? 500 : 200 };
    });
    await addEndpoint('/unordered', { events: ['chest.opened'] });
    const [a, b] = await grantChests(stack, player, 'silver-chest', 2);
    const openedA = await openOne(a!);
    const openedB = await openOne(b!);
    await eventually(async () => expect(openedBy('/unordered', player.id)).toHaveLength(2), 10_000);
    expect(first).toBe(domainEventId('chest.opened', openedA));
    expect(openedBy('/unordered', player.id).map((r) => r.body.data.opening_id)).toEqual([openedB, openedA]);
  });
});
