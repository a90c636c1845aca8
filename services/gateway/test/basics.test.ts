import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type TestStack } from '../../../test/support/stack.js';
import { expectError } from '../../../test/support/jsonapi-schema.js';

describe('gateway basics', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => stack?.close());

  it('answers /healthz while alive', async () => {
    const res = await stack.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz 200 when every service answers over NATS', async () => {
    const res = await stack.inject({ method: 'GET', url: '/readyz' });
    expect(res.json()).toMatchObject({ status: 'ready', checks: { players: true, wallet: true, chests: true, collections: true, redis: true } });
    expect(res.statusCode).toBe(200);
  });

  it('answers an unknown route with a JSON:API 404', async () => {
    const res = await stack.inject({ method: 'GET', url: '/nope', headers: { apikey: stack.apiKey } });
    expectError(res, 404, 'route_not_found');
  });

  it('refuses an /api call without apikey with 401', async () => {
    const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies' });
    expectError(res, 401, 'missing_api_key');
  });
});
