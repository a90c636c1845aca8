import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { ResolveApiKey } from '@ccs/shared';
import { startStack, type TestStack } from '../../../test/support/stack.js';
import { expectError, expectJsonApi } from '../../../test/support/jsonapi-schema.js';

const JSONAPI = 'application/vnd.api+json';
const AUTH_LIMIT = 3;
const API_LIMIT = 5;

/** A client address of its own for each test, so the per-address buckets do not mix. */
let lastAddress = 10;
const newAddress = () => `10.0.0.${lastAddress++}`;

describe('rate limiting (stored in Redis)', () => {
  let stack: TestStack;
  let appId: string;

  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT: 'on', RATE_LIMIT_PER_MINUTE: String(API_LIMIT), RATE_LIMIT_AUTH_PER_MINUTE: String(AUTH_LIMIT) } });
    appId = (await stack.bus.request(ResolveApiKey, { apiKey: stack.apiKey }, { requestId: 'rate-limit-test' })).appId;
  });
  afterAll(async () => stack?.close());

  const login = (remoteAddress: string, url = '/api/v1/players/login', forwardedFor?: string) =>
    stack.inject({
      method: 'POST',
      url,
      remoteAddress,
      headers: { apikey: stack.apiKey, 'content-type': JSONAPI, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
      payload: JSON.stringify({ data: { type: 'player', attributes: { email: 'nobody@example.com', password: 'Wrong!pass1' } } }),
    });
  const currencies = (remoteAddress: string, token?: string) =>
    stack.inject({
      method: 'GET',
      url: '/api/v1/currencies',
      remoteAddress,
      headers: { apikey: stack.apiKey, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });

  it('answers 429 with Retry-After and a JSON:API error once the login limit is spent', async () => {
    const address = newAddress();
    for (let i = 0; i < AUTH_LIMIT; i++) expect((await login(address)).statusCode).toBe(401);
    const res = await login(address);
    const [error] = expectError(res, 429, 'rate_limited');
    expect(error!.title).toBe('Too Many Requests');
    const retryAfter = Number(res.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  it('shares one credential budget between the /api/v1 login and the /players/login alias', async () => {
    const address = newAddress();
    for (let i = 0; i < AUTH_LIMIT; i++) expect((await login(address, i % 2 ? '/players/login' : '/api/v1/players/login')).statusCode).toBe(401);
    expectError(await login(address, '/players/login'), 429, 'rate_limited');
  });

  it('counts each address separately', async () => {
    const spent = newAddress();
    for (let i = 0; i <= AUTH_LIMIT; i++) await login(spent);
    expectError(await login(spent), 429, 'rate_limited');
    expect((await login(newAddress())).statusCode).toBe(401);
  });

  it('does not let a client escape its limit with a new X-Forwarded-For on every request', async () => {
    const publicClient = '203.0.113.9';
    for (let i = 0; i < AUTH_LIMIT; i++) expect((await login(publicClient, undefined, `198.51.100.${i}`)).statusCode).toBe(401);
    expectError(await login(publicClient, undefined, '198.51.100.200'), 429, 'rate_limited');
  });

  it('counts the forwarded client, not the proxy, behind a proxy on a private network', async () => {
    const proxy = '10.9.9.9';
    for (let i = 0; i < AUTH_LIMIT; i++) expect((await login(proxy, undefined, '198.51.100.7')).statusCode).toBe(401);
    expectError(await login(proxy, undefined, '198.51.100.7'), 429, 'rate_limited');
    // What the client itself claimed (left of the hop our proxy added) does not count.
    expectError(await login(proxy, undefined, '192.0.2.1, 198.51.100.7'), 429, 'rate_limited');
    // Another client behind the same proxy has its own budget.
    expect((await login(proxy, undefined, '198.51.100.8')).statusCode).toBe(401);
  });

  it('keeps the tighter credential limit apart from the general one', async () => {
    const address = newAddress();
    for (let i = 0; i <= AUTH_LIMIT; i++) await login(address);
    expectError(await login(address), 429);
    const res = await currencies(address);
    expect(res.statusCode).toBe(200);
    expectJsonApi(res.json());
  });

  it('limits ordinary calls per minute, per player when a token is sent', async () => {
    const address = newAddress();
    const email = `rl-${randomBytes(6).toString('hex')}@example.com`;
    const reg = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/register',
      remoteAddress: address,
      headers: { apikey: stack.apiKey, 'content-type': JSONAPI },
      payload: JSON.stringify({
        data: { type: 'player', attributes: { email, password: 'Str0ng!pass', password_confirmation: 'Str0ng!pass' }, relationships: {} },
      }),
    });
    expect(reg.statusCode, reg.body).toBe(201);
    const token: string = reg.json().meta.access_token;

    for (let i = 0; i < API_LIMIT; i++) expect((await currencies(address, token)).statusCode).toBe(200);
    expectError(await currencies(address, token), 429, 'rate_limited');
    // The same player from another address is the same bucket; the address without a token is not.
    expectError(await currencies(newAddress(), token), 429, 'rate_limited');
    expect((await currencies(address)).statusCode).toBe(200);
  });

  it('never limits the health probes', async () => {
    for (let i = 0; i < API_LIMIT * 2; i++) {
      expect((await stack.inject({ method: 'GET', url: '/healthz', remoteAddress: '10.0.1.1' })).statusCode).toBe(200);
    }
  });

  it("keeps its counters under the stack's REDIS_PREFIX", async () => {
    const ours = await stack.redis.keys(`${stack.env.REDIS_PREFIX}ratelimit:*`);
    expect(ours.length).toBeGreaterThan(0);
    expect(ours.some((k) => k.includes(`auth:${appId}:`))).toBe(true);
    expect(ours.some((k) => k.includes(`api:${appId}:player:`))).toBe(true);
    // Nothing about this app was written outside the prefix.
    const anywhere = await stack.redis.keys(`*${appId}*`);
    expect(anywhere.filter((k) => !k.startsWith(stack.env.REDIS_PREFIX!))).toEqual([]);
    // Counters expire on their own (a one-minute window).
    const ttl = await stack.redis.pttl(ours[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });
});
