import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { AppError } from '@ccs/shared';
import { buildApp } from '../src/app.js';
import { GatewayConfigSchema } from '../src/config.js';
import { startStack, type TestStack } from '../../../test/support/stack.js';
import { expectError } from '../../../test/support/jsonapi-schema.js';

/** No error document may carry a stack trace, a file path or an internal error name or message. */
function expectNoInternals(body: string): void {
  expect(body).not.toMatch(/\n\s+at |node_modules|\/work\/|\.ts:\d+|FST_|TypeError|ReferenceError|ECONNREFUSED|secret-internal/);
}

describe('gateway error documents', () => {
  let stack: TestStack;
  let app: FastifyInstance;

  beforeAll(async () => {
    stack = await startStack();
    // A gateway of this stack with test-only routes that fail the ways a handler can.
    app = await buildApp({ config: GatewayConfigSchema.parse(stack.env), bus: stack.bus, redis: stack.redis });
    app.get('/__test/boom', async () => {
      throw new TypeError('secret-internal detail at /work/main/services/x.ts:12');
    });
    app.get('/__test/reject-with-string', async () => Promise.reject('secret-internal string'));
    app.get('/__test/db-lost', async () => {
      throw AppError.unavailable('database_unavailable', 'The database is unavailable.');
    });
    app.get('/__test/typed', async () => {
      throw AppError.conflict('inventory_full', 'The inventory is full.', { pointer: '/data' });
    });
    app.get('/__test/many', async () => {
      throw AppError.many([
        { kind: 'invalid', code: 'too_short', detail: 'Too short.', source: { pointer: '/data/attributes/password' } },
        { kind: 'invalid', code: 'no_digit', detail: 'Needs a digit.', source: { pointer: '/data/attributes/password' } },
      ]);
    });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await stack?.close();
  });

  it('answers an unexpected exception with a generic 500 and keeps its message inside', async () => {
    for (const url of ['/__test/boom', '/__test/reject-with-string']) {
      const res = await app.inject({ method: 'GET', url });
      const [error] = expectError(res, 500, 'internal_error');
      expect(error!.detail).toBe('The request could not be completed. It has been logged; retry later.');
      expectNoInternals(res.body);
    }
  });

  it('answers a 503 with Retry-After (a database away: retry soon)', async () => {
    const res = await app.inject({ method: 'GET', url: '/__test/db-lost' });
    expectError(res, 503, 'database_unavailable');
    expect(res.headers['retry-after']).toBe('1');
  });

  it('renders a typed error unchanged, with its source', async () => {
    const res = await app.inject({ method: 'GET', url: '/__test/typed' });
    const [error] = expectError(res, 409, 'inventory_full');
    expect(error).toEqual({
      status: '409',
      code: 'inventory_full',
      title: 'Conflict',
      detail: 'The inventory is full.',
      source: { pointer: '/data' },
    });
  });

  it('renders every error of a multi-error failure', async () => {
    const res = await app.inject({ method: 'GET', url: '/__test/many' });
    const errors = expectError(res, 422);
    expect(errors.map((e) => e.code)).toEqual(['too_short', 'no_digit']);
  });

  it('answers an unknown route with 404, with or without an /api prefix', async () => {
    for (const url of ['/nope', '/api/v1/nope', '/api/v2/currencies', '/api/v1/currencies/extra/segments']) {
      const res = await stack.inject({ method: 'GET', url, headers: { apikey: stack.apiKey } });
      const [error] = expectError(res, 404, 'route_not_found');
      expect(error!.detail).toContain(url.split('?')[0]);
    }
  });

  it('asks for the apikey before routing under /api (401 without a key, 404 with one)', async () => {
    expectError(await stack.inject({ method: 'GET', url: '/api/v1/nope' }), 401, 'missing_api_key');
    expectError(await stack.inject({ method: 'GET', url: '/nope' }), 404, 'route_not_found');
  });

  it('answers a known path with an unsupported method with 404', async () => {
    const res = await stack.inject({ method: 'DELETE', url: '/api/v1/currencies', headers: { apikey: stack.apiKey } });
    expectError(res, 404, 'route_not_found');
  });

  it('answers 401 missing_api_key without an apikey, on /api routes and the unprefixed aliases', async () => {
    const calls = [
      { method: 'GET' as const, url: '/api/v1/currencies' },
      { method: 'GET' as const, url: '/currencies' },
      { method: 'POST' as const, url: '/players/login' },
      { method: 'GET' as const, url: '/api/v1/players/me' },
    ];
    for (const call of calls) {
      const res = await stack.inject({
        ...call,
        headers: { 'content-type': 'application/vnd.api+json' },
        payload: call.method === 'POST' ? '{}' : undefined,
      });
      expectError(res, 401, 'missing_api_key');
    }
    const empty = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: { apikey: '' } });
    expectError(empty, 401, 'missing_api_key');
  });

  it('answers 401 invalid_api_key to an unknown or absurdly long apikey', async () => {
    for (const apikey of ['not-a-real-key-0000000000', 'x'.repeat(201), `${stack.apiKey}x`]) {
      const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: { apikey } });
      const [error] = expectError(res, 401, 'invalid_api_key');
      expect(error!.detail).not.toContain(apikey);
    }
  });

  it('does not require an apikey for health probes', async () => {
    expect((await stack.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await stack.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('answers 401 to a malformed Authorization header, even where a token is optional', async () => {
    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer not a token', 'Bearer a.b.c']) {
      const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: { apikey: stack.apiKey, authorization } });
      expectError(res, 401, 'invalid_token');
      expectNoInternals(res.body);
    }
  });

  it('answers 400 naming the parameter for an unknown query parameter or a malformed path id', async () => {
    const query = await stack.inject({ method: 'GET', url: '/api/v1/currencies?color=red', headers: { apikey: stack.apiKey } });
    const [q] = expectError(query, 400, 'unknown_parameter');
    expect(q!.source).toEqual({ parameter: 'color' });
    const fields = await stack.inject({ method: 'GET', url: '/api/v1/currencies?fields[currency]=price', headers: { apikey: stack.apiKey } });
    const [f] = expectError(fields, 400);
    expect(f!.source).toEqual({ parameter: 'fields[currency]' });
  });

  it('answers 400 to a URL with broken percent-encoding', async () => {
    const res = await stack.inject({ method: 'GET', url: '/api/v1/chests/%E0%A4%A', headers: { apikey: stack.apiKey } });
    expectError(res, 400, 'bad_url');
  });
});
