import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startStack, type TestStack } from '../../../test/support/stack.js';
import { expectError, expectJsonApi } from '../../../test/support/jsonapi-schema.js';

const JSONAPI = 'application/vnd.api+json';

/** A registration document as the spec shows it, for a fresh address. */
function registration(): string {
  const email = `neg-${randomBytes(6).toString('hex')}@example.com`;
  return JSON.stringify({
    data: { type: 'player', attributes: { email, password: 'Str0ng!pass', password_confirmation: 'Str0ng!pass' }, relationships: {} },
  });
}

/** No error document may carry a stack trace, a file path or an internal error name. */
function expectNoInternals(body: string): void {
  expect(body).not.toMatch(/\n\s+at |node_modules|\/work\/|\.ts:\d+|FST_|TypeError|SyntaxError|ZodError/);
}

describe('JSON:API content negotiation and request parsing', () => {
  let stack: TestStack;
  let token: string;
  let coinsId: string;

  beforeAll(async () => {
    stack = await startStack();
    const reg = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/register',
      headers: { apikey: stack.apiKey, 'content-type': JSONAPI },
      payload: registration(),
    });
    expect(reg.statusCode, reg.body).toBe(201);
    token = reg.json().meta.access_token;
    const list = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: { apikey: stack.apiKey } });
    coinsId = list.json().data.find((c: { attributes: { code: string } }) => c.attributes.code === 'coins').id;
  });
  afterAll(async () => stack?.close());

  const register = (headers: Record<string, string>, payload: string = registration()) =>
    stack.inject({ method: 'POST', url: '/api/v1/players/register', headers: { apikey: stack.apiKey, ...headers }, payload });
  const credit = (headers: Record<string, string>, payload: string) =>
    stack.inject({
      method: 'POST',
      url: `/api/v1/currencies/${coinsId}/credit`,
      headers: { apikey: stack.apiKey, authorization: `Bearer ${token}`, ...headers },
      payload,
    });

  it('accepts a JSON:API body with the exact media type', async () => {
    const res = await register({ 'content-type': JSONAPI, accept: JSONAPI });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['content-type']).toContain(JSONAPI);
    expectJsonApi(res.json());
  });

  it.each([
    ['application/json'],
    ['text/plain'],
    ['application/x-www-form-urlencoded'],
    [`${JSONAPI}; charset=utf-8`],
    [`${JSONAPI}; ext="https://jsonapi.org/ext/atomic"`],
  ])('answers 415 to a registration sent as %s', async (contentType) => {
    const res = await register({ 'content-type': contentType });
    const [error] = expectError(res, 415, 'unsupported_media_type');
    expect(error!.detail).toContain(JSONAPI);
    expectNoInternals(res.body);
  });

  it('answers 415 to a body without any Content-Type', async () => {
    const res = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/register',
      headers: { apikey: stack.apiKey },
      payload: Buffer.from(registration()),
    });
    expectError(res, 415, 'unsupported_media_type');
  });

  it('answers 415 to a credit sent as JSON:API instead of application/json', async () => {
    const res = await credit({ 'content-type': JSONAPI }, JSON.stringify({ amount: '1.00' }));
    expectError(res, 415, 'unsupported_media_type');
  });

  it('answers 406 when Accept names the JSON:API media type only with parameters', async () => {
    const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: { apikey: stack.apiKey, accept: `${JSONAPI}; ext=bulk` } });
    const [error] = expectError(res, 406, 'not_acceptable');
    expect(error!.title).toBe('Not Acceptable');
  });

  it('serves a request whose Accept also lists the plain JSON:API media type or a q weight', async () => {
    for (const accept of [`${JSONAPI}; ext=bulk, ${JSONAPI}`, `${JSONAPI};q=0.9`, '*/*', `application/json, ${JSONAPI}`]) {
      const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: { apikey: stack.apiKey, accept } });
      expect(res.statusCode, `${accept}: ${res.body}`).toBe(200);
      expectJsonApi(res.json());
    }
  });

  it.each([['{"data":'], ['{data: {}}'], ['not json at all'], ['']])('answers 400 malformed_json to the body %j', async (payload) => {
    const res = await register({ 'content-type': JSONAPI }, payload);
    const [error] = expectError(res, 400);
    expect(['malformed_json', 'missing_body']).toContain(error!.code);
    expectNoInternals(res.body);
  });

  it('answers 400 malformed_json on the plain-JSON credit route too', async () => {
    const res = await credit({ 'content-type': 'application/json' }, '{"amount": "1.00"');
    expectError(res, 400, 'malformed_json');
  });

  it('answers 413 to a body over the limit, on both body media types', async () => {
    const big = JSON.stringify({ data: { type: 'player', attributes: { email: 'x'.repeat(70 * 1024) } } });
    const res = await register({ 'content-type': JSONAPI }, big);
    const [error] = expectError(res, 413, 'payload_too_large');
    expect(error!.title).toBe('Payload Too Large');
    const res2 = await credit({ 'content-type': 'application/json' }, JSON.stringify({ amount: '1'.repeat(70 * 1024) }));
    expectError(res2, 413, 'payload_too_large');
  });

  it('answers 422 with a pointer for a well-formed document of the wrong shape', async () => {
    const res = await register({ 'content-type': JSONAPI }, JSON.stringify({ data: { type: 'chest', attributes: {} } }));
    const errors = expectError(res, 422);
    expect(errors.every((e) => typeof e.source?.pointer === 'string' && e.source.pointer.startsWith('/data'))).toBe(true);
  });

  it('tags every answer, errors included, with a request id', async () => {
    const res = await register({ 'content-type': 'text/plain' });
    expect(String(res.headers['x-request-id'])).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await stack.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'client-chosen-id-123' } });
    expect(kept.headers['x-request-id']).toBe('client-chosen-id-123');
  });
});
