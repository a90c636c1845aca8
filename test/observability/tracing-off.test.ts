/**
 * Tracing is OFF by default: with no OTEL_* variables nothing is registered and no span is made,
 * yet the `traceparent` a request arrives with still reaches every service and the grant
 * messages unchanged, so a tracing proxy or another system's trace is not broken by us.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { initTracing } from '@ccs/shared';
import { startStack, type TestStack } from '../support/stack.js';
import { registerPlayer, sql, waitForStarterChest } from '../../services/chests/test/support/chests.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

describe('tracing off (the default)', () => {
  it('registers nothing when no OTEL_* variable asks for it', () => {
    const tracing = initTracing('observability-test', { env: {} });
    expect(tracing.enabled).toBe(false);
    expect(trace.getTracer('ccs').startSpan('x').isRecording()).toBe(false);
  });

  it('passes the incoming traceparent through the services into the grant message unchanged', async () => {
    const player = await registerPlayer(stack);
    await waitForStarterChest(stack, player);
    const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    const res = await stack.inject({
      method: 'GET',
      url: `/api/v1/chests/${player.starterChestId}/open`,
      headers: { apikey: player.apiKey, authorization: `Bearer ${player.token}`, accept: 'application/vnd.api+json', traceparent },
    });
    expect(res.statusCode, res.body).toBe(200);
    const rows = await sql<{ headers: Record<string, string> }>(stack, 'SELECT headers FROM chests.outbox WHERE id = $1', [
      res.json().meta.opening_id,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.headers.traceparent).toBe(traceparent);
    expect(rows[0]!.headers['ccs-request-id']).toBe(res.headers['x-request-id']);
  });
});
