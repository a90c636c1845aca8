import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, createChestClient, newIdempotencyKey, type ChestClient, type RetryOptions, type Tokens } from '../src/index.js';

/**
 * The client's own behaviour on answers a healthy gateway rarely gives on cue: a refresh that fails
 * for a while (429, 503, 504, a dropped connection) against one the API refuses, and Retry-After.
 * A small node:http server stands in for the remote gateway; each test scripts its answers.
 */
type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const error = (res: ServerResponse, status: number, code: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/vnd.api+json', ...headers });
  res.end(JSON.stringify({ errors: [{ status: String(status), code, title: code, detail: `${code} (fake gateway)` }] }));
};
const ok = (res: ServerResponse, doc: unknown, status = 200) => {
  res.writeHead(status, { 'content-type': 'application/vnd.api+json' });
  res.end(JSON.stringify(doc));
};
const session = (n: number) => ({
  data: { type: 'player', id: 'p1', attributes: {} },
  meta: { access_token: `at-${n}`, refresh_token: `rt-${n}` },
});

describe('the typed client on failing answers (a fake gateway)', () => {
  let server: Server;
  let baseUrl: string;
  let handler: Handler;
  /** Every request the fake gateway got: method, path, authorization and Idempotency-Key. */
  let seen: { method: string; path: string; auth?: string; key?: string; at: number }[];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push({
          method: req.method!,
          path: new URL(req.url!, 'http://x').pathname,
          auth: req.headers.authorization,
          key: req.headers['idempotency-key'] as string | undefined,
          at: Date.now(),
        });
        handler(req, res, body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  /** The waits the client asked for between tries: setTimeout called from its session, in ms. */
  let waits: number[];
  beforeEach(() => {
    seen = [];
    waits = [];
    const realSetTimeout = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
      if (/[\\/]packages[\\/]client[\\/]src[\\/]session\.ts/.test(new Error().stack ?? '')) waits.push(ms ?? 0);
      return realSetTimeout(fn, ms, ...args);
    }) as typeof setTimeout);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const paths = () => seen.map((s) => `${s.method} ${s.path}`);
  const client = (heard: (Tokens | undefined)[] = [], retry?: RetryOptions | false): ChestClient =>
    createChestClient({ baseUrl, apiKey: 'pk_test', tokens: { accessToken: 'at-0', refreshToken: 'rt-0' }, onTokens: (t) => heard.push(t), retry });
  /** `/players/me` refuses the stale token `at-0` as expired and answers any other; the refresh answers as `refresh` says. */
  const gateway =
    (refresh: Handler): Handler =>
    (req, res, body) => {
      const path = new URL(req.url!, 'http://x').pathname;
      if (path === '/api/v1/players/refresh') return refresh(req, res, body);
      if (req.headers.authorization === 'Bearer at-0') return error(res, 401, 'token_expired');
      ok(res, { data: { type: 'player', id: 'p1', attributes: { email: null } } });
    };

  it.each([
    [429, 'rate_limited', { 'retry-after': '30' }, 30],
    [503, 'service_unavailable', { 'retry-after': '2' }, 2],
    [504, 'service_timeout', {}, undefined],
  ])('keeps the tokens when the refresh answers %i, and the call throws that error to retry later', async (status, code, headers, retryAfter) => {
    handler = gateway((_req, res) => error(res, status, code, headers));
    const heard: (Tokens | undefined)[] = [];
    const c = client(heard, false);
    const err = await c.me().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect([(err as ApiError).status, (err as ApiError).code, (err as ApiError).retryAfter]).toEqual([status, code, retryAfter]);
    expect(c.session).toEqual({ accessToken: 'at-0', refreshToken: 'rt-0' });
    expect(heard).toEqual([]);

    // The gateway is back: the same call succeeds with the kept refresh token.
    handler = gateway((_req, res, body) => {
      expect(JSON.parse(body).data.attributes.refresh_token).toBe('rt-0');
      ok(res, session(1));
    });
    expect((await c.me()).data.id).toBe('p1');
    expect(c.session).toEqual({ accessToken: 'at-1', refreshToken: 'rt-1' });
    expect(heard).toEqual([{ accessToken: 'at-1', refreshToken: 'rt-1' }]);
  });

  it('keeps the tokens when the refresh never gets an answer (a dropped connection)', async () => {
    handler = gateway((req) => req.socket.destroy());
    const heard: (Tokens | undefined)[] = [];
    const c = client(heard, false);
    await expect(c.me()).rejects.toThrow(/fetch failed/);
    await expect(c.refresh()).rejects.toThrow(/fetch failed/);
    expect(c.session).toEqual({ accessToken: 'at-0', refreshToken: 'rt-0' });
    expect(heard).toEqual([]);
  });

  it.each(['invalid_refresh_token', 'refresh_token_expired', 'refresh_token_revoked', 'refresh_token_reused'])(
    'signs out when the refresh token is refused (401 %s)',
    async (code) => {
      handler = gateway((_req, res) => error(res, 401, code));
      const heard: (Tokens | undefined)[] = [];
      const c = client(heard, false);
      const err = await c.me().catch((e: unknown) => e);
      // The call fails with its own 401; the session is gone and the game hears it once.
      expect([(err as ApiError).status, (err as ApiError).code]).toEqual([401, 'token_expired']);
      expect([c.session, heard]).toEqual([undefined, [undefined]]);
      expect(paths()).toEqual(['GET /api/v1/players/me', 'POST /api/v1/players/refresh']);
    },
  );

  it("keeps the tokens on a refresh refused for the app's key, not the refresh token", async () => {
    handler = gateway((_req, res) => error(res, 401, 'invalid_api_key'));
    const c = client([], false);
    await expect(c.refresh()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(c.session?.refreshToken).toBe('rt-0');
  });

  it('refresh() says true, false or throws, and one refresh serves concurrent callers', async () => {
    handler = gateway((_req, res) => error(res, 503, 'overloaded', { 'retry-after': '1' }));
    const c = client([], false);
    await expect(c.refresh()).rejects.toMatchObject({ name: 'ApiError', status: 503, code: 'overloaded', retryAfter: 1 });
    handler = gateway((_req, res) => setTimeout(() => ok(res, session(2)), 50));
    seen = [];
    expect(await Promise.all([c.refresh(), c.refresh(), c.me()])).toMatchObject([true, true, { data: { id: 'p1' } }]);
    expect(paths().filter((p) => p.endsWith('/refresh'))).toHaveLength(1);
    handler = gateway((_req, res) => error(res, 401, 'refresh_token_revoked'));
    expect([await c.refresh(), c.session]).toEqual([false, undefined]);
  });

  it('waits Retry-After and repeats a GET, within the bound', async () => {
    let calls = 0;
    handler = (_req, res) => (++calls === 1 ? error(res, 503, 'overloaded', { 'retry-after': '1' }) : ok(res, { data: [] }));
    expect((await client([], { attempts: 2, maxDelayMs: 2000 }).currencies()).data).toEqual([]);
    // One wait, of the Retry-After asked for, and the second request came after it.
    expect(waits).toEqual([1000]);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('throws at once, with retryAfter, when Retry-After is beyond the bound', async () => {
    handler = (_req, res) => error(res, 429, 'rate_limited', { 'retry-after': '60' });
    const err = (await client([], { attempts: 5, maxDelayMs: 5000 })
      .catalog()
      .catch((e: unknown) => e)) as ApiError;
    expect([err.status, err.code, err.retryAfter, err.detail]).toEqual([429, 'rate_limited', 60, 'rate_limited (fake gateway)']);
    // No wait at all: the answer came back as the first request got it.
    expect(waits).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('repeats at most `attempts` times, and never past maxDelayMs in all', async () => {
    handler = (_req, res) => error(res, 503, 'overloaded', { 'retry-after': '0' });
    await expect(client([], { attempts: 2, maxDelayMs: 1000 }).pity()).rejects.toMatchObject({ status: 503, retryAfter: 0 });
    expect(seen).toHaveLength(3);
    expect(waits).toEqual([0, 0]);

    seen = [];
    waits = [];
    handler = (_req, res) => error(res, 503, 'overloaded', { 'retry-after': '1' });
    await expect(client([], { attempts: 5, maxDelayMs: 2500 }).pity()).rejects.toMatchObject({ status: 503, retryAfter: 1 });
    // Two waits of 1 s fit in 2.5 s, a third would not: three requests, two waits of 1 s.
    expect(seen).toHaveLength(3);
    expect(waits).toEqual([1000, 1000]);
  });

  it('repeats a POST only with an Idempotency-Key, and with the same key', async () => {
    handler = (_req, res) => error(res, 503, 'overloaded', { 'retry-after': '0' });
    const key = newIdempotencyKey();
    await expect(client([], { attempts: 2 }).open('c1', { idempotencyKey: key })).rejects.toMatchObject({ status: 503 });
    expect(seen.map((s) => s.key)).toEqual([key, key, key]);

    seen = [];
    await expect(client([], { attempts: 2 }).unlock('c1')).rejects.toMatchObject({ status: 503 });
    await expect(client([], { attempts: 2 }).rotateSeed()).rejects.toMatchObject({ status: 503 });
    expect(paths()).toEqual(['POST /api/v1/chests/c1/unlock', 'POST /api/v1/players/me/fairness/rotate']);
  });

  it("repeats a store purchase's verification on Retry-After, with the same body: a transaction grants once", async () => {
    const bodies: string[] = [];
    handler = (_req, res, body) => {
      bodies.push(body);
      if (bodies.length === 1) return error(res, 503, 'store_unavailable', { 'retry-after': '0' });
      ok(res, { data: { type: 'store_purchase', id: 'sp1', attributes: {} }, meta: { replayed: false } }, 201);
    };
    const verified = await client([], { attempts: 2 }).verifyPurchase({ platform: 'google', productId: 'gems_500', purchaseToken: 'tok-1' });
    expect(verified.data.id).toBe('sp1');
    expect(paths()).toEqual(['POST /api/v1/players/me/store/purchases', 'POST /api/v1/players/me/store/purchases']);
    expect(bodies.map((b) => JSON.parse(b))).toEqual([
      { data: { type: 'store_purchase', attributes: { platform: 'google', product_id: 'gems_500', purchase_token: 'tok-1' } } },
      { data: { type: 'store_purchase', attributes: { platform: 'google', product_id: 'gems_500', purchase_token: 'tok-1' } } },
    ]);
    // Beyond the bound, the refusal comes back with its Retry-After, as for any call.
    seen = [];
    handler = (_req, res) => error(res, 503, 'store_unavailable', { 'retry-after': '5' });
    await expect(
      client([], { attempts: 2, maxDelayMs: 1000 }).verifyPurchase({ platform: 'apple', signedTransaction: 'eyJ…' }),
    ).rejects.toMatchObject({ status: 503, code: 'store_unavailable', retryAfter: 5 });
    expect(seen).toHaveLength(1);
  });

  it('does not repeat without Retry-After, nor with retry: false', async () => {
    handler = (_req, res) => error(res, 503, 'service_unavailable');
    await expect(client([], { attempts: 3 }).currencies()).rejects.toMatchObject({ status: 503, retryAfter: undefined });
    handler = (_req, res) => error(res, 429, 'rate_limited', { 'retry-after': '0' });
    await expect(client([], false).currencies()).rejects.toMatchObject({ status: 429, retryAfter: 0 });
    expect(seen).toHaveLength(2);
  });
});
