/**
 * One chest opening is ONE trace: gateway → chests (NATS request-reply) → outbox → JetStream →
 * collections and players consumers, each span the child of the one that caused it, continuing
 * the caller's own `traceparent`. Runs the in-process stack on real Postgres, NATS and Redis with
 * a tracer provider recording into memory (registered before the stack starts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { SpanKind } from '@opentelemetry/api';
import { initTracing, type Tracing } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { registerPlayer, waitForStarterChest } from '../../services/chests/test/support/chests.js';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let stack: TestStack;

beforeAll(async () => {
  tracing = initTracing('observability-test', { spanProcessors: [new SimpleSpanProcessor(exporter)] });
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
  await tracing?.shutdown();
});

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;

/** The one span of the trace matching `pred` (fails when there is none or several). */
function only(spans: ReadableSpan[], what: string, pred: (s: ReadableSpan) => boolean): ReadableSpan {
  const found = spans.filter(pred);
  expect(
    found.map((s) => s.name),
    `exactly one ${what}`,
  ).toHaveLength(1);
  return found[0]!;
}

describe('tracing a chest opening', () => {
  it('is one trace from the gateway through chests, the outbox and both grant consumers, continuing the caller’s traceparent', async () => {
    const player = await registerPlayer(stack);
    await waitForStarterChest(stack, player);

    const callerTrace = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const res = await stack.inject({
      method: 'GET',
      url: `/api/v1/chests/${player.starterChestId}/open`,
      headers: {
        apikey: player.apiKey,
        authorization: `Bearer ${player.token}`,
        accept: 'application/vnd.api+json',
        traceparent: `00-${callerTrace}-${callerSpan}-01`,
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const requestId = String(res.headers['x-request-id']);

    // The players consumer applies the experience on its own time; wait until its span ended.
    const spans = await eventually(async () => {
      const all = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === callerTrace);
      expect(all.some((s) => s.attributes['messaging.consumer.group.name'] === 'players-experience')).toBe(true);
      expect(all.some((s) => s.attributes['messaging.consumer.group.name'] === 'collections-openings')).toBe(true);
      return all;
    }, 15_000);

    // 1. The gateway's server span continues the caller's span.
    const gateway = only(spans, 'gateway span', (s) => s.kind === SpanKind.SERVER && s.attributes['http.route'] === '/api/v1/chests/:id/open');
    expect(gateway.name).toBe('GET /api/v1/chests/:id/open');
    expect(parentOf(gateway)).toBe(callerSpan);
    expect(gateway.attributes['http.response.status_code']).toBe(200);
    expect(gateway.attributes['ccs.request_id']).toBe(requestId);

    // 2. Its NATS call to chests is a client span under it; the chests handler's span is under that.
    const call = only(spans, 'client span of chests.v1.open', (s) => s.kind === SpanKind.CLIENT && s.name === 'chests.v1.open');
    expect(parentOf(call)).toBe(idOf(gateway));
    const handler = only(spans, 'chests handler span', (s) => s.kind === SpanKind.SERVER && s.name === 'chests.v1.open');
    expect(handler.attributes['ccs.service']).toBe('chests');
    expect(handler.attributes['ccs.request_id']).toBe(requestId);
    expect(parentOf(handler)).toBe(idOf(call));

    // 3. The grant written to the outbox in the handler's transaction, and its publication.
    const enqueue = only(spans, 'enqueue span', (s) => s.kind === SpanKind.PRODUCER && s.name === 'enqueue grants.openings.granted');
    expect(parentOf(enqueue)).toBe(idOf(handler));
    const publish = only(spans, 'publish span', (s) => s.kind === SpanKind.PRODUCER && s.name === 'publish grants.openings.granted');
    expect(parentOf(publish)).toBe(idOf(enqueue));
    expect(publish.attributes['messaging.message.id']).toBe(enqueue.attributes['messaging.message.id']);

    // 4. Both durable consumers continue it from the message's headers.
    for (const durable of ['collections-openings', 'players-experience']) {
      const consume = only(
        spans,
        `${durable} span`,
        (s) => s.kind === SpanKind.CONSUMER && s.attributes['messaging.consumer.group.name'] === durable,
      );
      expect(consume.name).toBe('process grants.openings.granted');
      expect(parentOf(consume)).toBe(idOf(enqueue));
      expect(consume.attributes['ccs.outcome']).toBe('applied');
    }

    // 5. Every span of the trace hangs off another span of it, back to the caller's.
    const ids = new Set(spans.map(idOf));
    for (const s of spans) expect(ids.has(parentOf(s)!) || parentOf(s) === callerSpan, `${s.name} has a parent in the trace`).toBe(true);
  });

  it('starts a new trace for a request without traceparent, and leaves probes untraced', async () => {
    exporter.reset();
    const res = await stack.inject({ method: 'GET', url: '/api/v1/chests', headers: { apikey: stack.apiKey, accept: 'application/vnd.api+json' } });
    expect(res.statusCode).toBe(200);
    expect((await stack.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    const spans = exporter.getFinishedSpans();
    const gateway = only(spans, 'catalog span', (s) => s.kind === SpanKind.SERVER && s.attributes['http.route'] === '/api/v1/chests');
    expect(gateway.parentSpanContext).toBeUndefined();
    const handler = only(spans, 'chests.v1.list_chest_types span', (s) => s.kind === SpanKind.SERVER && s.attributes['ccs.service'] === 'chests');
    expect(handler.spanContext().traceId).toBe(gateway.spanContext().traceId);
    // /readyz asks every service's health subject: none of it is recorded.
    expect(spans.filter((s) => /health|readyz/.test(s.name))).toEqual([]);
  });
});
