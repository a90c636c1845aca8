import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GoogleStandIn, generateServiceAccountKey, type ServiceAccountKeyFile } from '../../../../test/support/store/google-stand-in.js';
import { GoogleAccessTokens } from '../../src/google/access-tokens.js';
import type { GoogleResult } from '../../src/google/http.js';
import { GooglePlayClient } from '../../src/google/play-client.js';
import { parseServiceAccountKey, type ServiceAccountKey } from '../../src/google/service-account.js';

const PKG = 'com.example.chests';

/** The failure of a result that must have failed. */
function failure<T>(r: GoogleResult<T>) {
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r.value)}`);
  return r.error;
}

/** The value of a result that must have succeeded. */
function value<T>(r: GoogleResult<T>): T {
  if (!r.ok) throw new Error(`expected success, got ${JSON.stringify(r.error)}`);
  return r.value;
}

/** Polls until the check passes (bounded by progress, not by a fixed wait). */
async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('Google Play Developer API client, against the Google stand-in', () => {
  const google = new GoogleStandIn();
  let file: ServiceAccountKeyFile;
  let key: ServiceAccountKey;
  let seq = 0;

  /** A client with fresh token cache (so each test counts its own token requests), or the given one. */
  function client(opts: { timeoutMs?: number; tokens?: GoogleAccessTokens; credentials?: ServiceAccountKey; apiUrl?: string } = {}) {
    const timeoutMs = opts.timeoutMs ?? 5000;
    const tokens = opts.tokens ?? new GoogleAccessTokens({ tokenUrl: google.tokenUrl, timeoutMs });
    return new GooglePlayClient({ apiUrl: opts.apiUrl ?? google.apiUrl, timeoutMs, tokens, credentials: opts.credentials ?? key });
  }

  /** A purchase registered with the stand-in, under a unique token. */
  function purchase(spec: Partial<Parameters<GoogleStandIn['addPurchase']>[0]> = {}) {
    return google.addPurchase({ packageName: PKG, productId: 'gems_100', token: `tok-${++seq}-${'x'.repeat(40)}`, ...spec });
  }

  function counts() {
    return { ...google.counts };
  }

  beforeAll(async () => {
    await google.start();
    file = await generateServiceAccountKey();
    key = parseServiceAccountKey(file);
    google.registerServiceAccount(file, [PKG]);
  });
  afterEach(() => google.heal());
  afterAll(() => google.stop());

  it('fetches an access token once and reuses it for later calls', async () => {
    const c = client();
    const p = purchase();
    const before = counts();
    for (let i = 0; i < 3; i++) expect(value(await c.getProductPurchase(PKG, p.productId, p.token)).state).toBe('purchased');
    expect(google.counts.token - before.token).toBe(1);
    expect(google.counts.purchase - before.purchase).toBe(3);
  });

  it('shares one token request among concurrent callers, and keeps one token per service account', async () => {
    const tokens = new GoogleAccessTokens({ tokenUrl: google.tokenUrl, timeoutMs: 5000 });
    const p = purchase();
    const before = counts();
    google.hold(['token']);
    const calls = Promise.all([1, 2, 3].map(() => client({ tokens }).getProductPurchase(PKG, p.productId, p.token)));
    await until(() => google.waiting === 1);
    google.release();
    for (const r of await calls) expect(value(r).state).toBe('purchased');
    expect(google.counts.token - before.token).toBe(1);

    const otherFile = await generateServiceAccountKey();
    google.registerServiceAccount(otherFile, [PKG]);
    const other = parseServiceAccountKey(otherFile);
    value(await client({ tokens, credentials: other }).getProductPurchase(PKG, p.productId, p.token));
    value(await client({ tokens }).getProductPurchase(PKG, p.productId, p.token));
    expect(google.counts.token - before.token).toBe(2);
  });

  it('reads a purchased purchase and its order price', async () => {
    const p = purchase({
      obfuscatedExternalAccountId: 'player-123',
      quantity: 3,
      price: '12.99',
      currency: 'EUR',
      regionCode: 'DE',
      purchaseTimeMillis: 1_700_000_000_123,
    });
    const c = client();
    const got = value(await c.getProductPurchase(PKG, p.productId, p.token));
    expect(got).toEqual({
      state: 'purchased',
      consumed: false,
      acknowledged: false,
      orderId: p.orderId,
      purchaseTimeMillis: 1_700_000_000_123,
      quantity: 3,
      purchaseType: undefined,
      obfuscatedExternalAccountId: 'player-123',
      obfuscatedExternalProfileId: undefined,
      regionCode: 'DE',
    });
    expect(value(await c.getOrder(PKG, got.orderId!))).toEqual({ orderId: p.orderId, state: 'PROCESSED', price: '12.99', currency: 'EUR' });

    const yen = purchase({ price: '160', currency: 'JPY' });
    expect(value(await c.getOrder(PKG, yen.orderId!))).toMatchObject({ price: '160', currency: 'JPY' });
    const cents = purchase({ price: '0.05' });
    expect(value(await c.getOrder(PKG, cents.orderId!))).toMatchObject({ price: '0.05', currency: 'USD' });
    // A single unit: Google leaves `quantity` out.
    expect(value(await c.getProductPurchase(PKG, cents.productId, cents.token)).quantity).toBe(1);
  });

  it('reports cancelled and pending purchases as such, and a promo purchase without an order', async () => {
    const c = client();
    const cancelled = purchase({ state: 'cancelled' });
    const pending = purchase({ state: 'pending' });
    const promo = purchase({ orderId: null, purchaseType: 1 });
    expect(value(await c.getProductPurchase(PKG, cancelled.productId, cancelled.token)).state).toBe('cancelled');
    expect(value(await c.getProductPurchase(PKG, pending.productId, pending.token)).state).toBe('pending');
    expect(value(await c.getOrder(PKG, pending.orderId!)).state).toBe('PENDING');
    const promoRead = value(await c.getProductPurchase(PKG, promo.productId, promo.token));
    expect(promoRead).toMatchObject({ state: 'purchased', orderId: undefined, purchaseType: 1 });
  });

  it('consumes a purchase once; Google refuses a second consume', async () => {
    const c = client();
    const p = purchase();
    const before = counts();
    value(await c.consume(PKG, p.productId, p.token));
    expect(google.counts.consume - before.consume).toBe(1);
    expect(google.purchase(PKG, p.productId, p.token)!.consumed).toBe(true);
    expect(value(await c.getProductPurchase(PKG, p.productId, p.token)).consumed).toBe(true);
    expect(failure(await c.consume(PKG, p.productId, p.token))).toMatchObject({
      kind: 'invalid',
      detail: expect.stringContaining('invalidPurchaseState'),
    });
    expect(google.counts.consume - before.consume).toBe(2);
  });

  it('answers not_found for an unknown token, product or order', async () => {
    const c = client();
    const p = purchase();
    expect(failure(await c.getProductPurchase(PKG, p.productId, 'never-issued')).kind).toBe('not_found');
    expect(failure(await c.getProductPurchase(PKG, 'other_product', p.token)).kind).toBe('not_found');
    expect(failure(await c.consume(PKG, p.productId, 'never-issued')).kind).toBe('not_found');
    expect(failure(await c.getOrder(PKG, 'GPA.0000-0000-0000-00000')).kind).toBe('not_found');
  });

  it('is unavailable when Google holds its answer past the deadline', async () => {
    const p = purchase();
    const c = client({ timeoutMs: 300 });
    value(await c.getProductPurchase(PKG, p.productId, p.token));
    google.hold(['purchase']);
    const r = await c.getProductPurchase(PKG, p.productId, p.token);
    expect(google.waiting).toBe(1);
    expect(failure(r)).toEqual({ kind: 'unavailable', detail: 'timeout' });
    google.release();
  });

  it('is unavailable when the token endpoint is slower than the deadline', async () => {
    const p = purchase();
    google.slow(3000, ['token']);
    const before = counts();
    expect(failure(await client({ timeoutMs: 300 }).getProductPurchase(PKG, p.productId, p.token))).toEqual({
      kind: 'unavailable',
      detail: 'timeout',
    });
    expect(google.counts.purchase - before.purchase).toBe(0);
  });

  it('is unavailable when Google is down: 503 with its Retry-After, 429, 500, a closed connection, a refused one', async () => {
    const p = purchase();
    const c = client();
    value(await c.getProductPurchase(PKG, p.productId, p.token));
    google.down({ status: 503, retryAfter: '7' }, ['purchase']);
    expect(failure(await c.getProductPurchase(PKG, p.productId, p.token))).toMatchObject({ kind: 'unavailable', retryAfterSeconds: 7 });
    google.down({ status: 429, retryAfter: new Date(Date.now() + 30_000).toUTCString() }, ['purchase']);
    const limited = failure(await c.getProductPurchase(PKG, p.productId, p.token));
    expect(limited.kind).toBe('unavailable');
    expect(limited.kind === 'unavailable' && limited.retryAfterSeconds).toBeGreaterThanOrEqual(28);
    google.down({ status: 500 }, ['purchase']);
    expect(failure(await c.getProductPurchase(PKG, p.productId, p.token))).toEqual({
      kind: 'unavailable',
      detail: 'HTTP 500 UNAVAILABLE/unavailable',
    });
    google.down('close');
    expect(failure(await c.getProductPurchase(PKG, p.productId, p.token))).toMatchObject({
      kind: 'unavailable',
      detail: expect.stringMatching(/^network: /),
    });
    google.down({ status: 503 }, ['token']);
    expect(failure(await client().getProductPurchase(PKG, p.productId, p.token))).toMatchObject({ kind: 'unavailable' });
    google.heal();

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await client({ apiUrl: `http://127.0.0.1:${port}` }).getProductPurchase(PKG, p.productId, p.token);
    expect(failure(refused)).toMatchObject({ kind: 'unavailable', detail: 'network: ECONNREFUSED' });
  });

  it('renews an access token Google refuses once (expired early) and retries the call once', async () => {
    const c = client();
    const p = purchase();
    value(await c.getProductPurchase(PKG, p.productId, p.token));
    const before = counts();
    google.expireAccessTokens();
    expect(value(await c.getProductPurchase(PKG, p.productId, p.token)).state).toBe('purchased');
    expect(google.counts.token - before.token).toBe(1);
    expect(google.counts.purchase - before.purchase).toBe(2);
  });

  it('reports credentials_rejected when the key is deleted, unknown or signs for another audience, or lacks access to the app', async () => {
    const p = purchase();
    const deletedFile = await generateServiceAccountKey();
    google.registerServiceAccount(deletedFile, [PKG]);
    const deleted = parseServiceAccountKey(deletedFile);
    const c = client({ credentials: deleted });
    value(await c.getProductPurchase(PKG, p.productId, p.token));
    // The key is deleted in the Cloud console and the token runs out: 401, then the assertion is refused.
    google.deleteKey(deletedFile.client_email, deletedFile.private_key_id);
    google.expireAccessTokens();
    const before = counts();
    expect(failure(await c.getProductPurchase(PKG, p.productId, p.token))).toEqual({
      kind: 'credentials_rejected',
      detail: 'token endpoint HTTP 400 invalid_grant',
    });
    expect(google.counts.purchase - before.purchase).toBe(1);

    const stranger = parseServiceAccountKey(await generateServiceAccountKey());
    expect(failure(await client({ credentials: stranger }).getProductPurchase(PKG, p.productId, p.token)).kind).toBe('credentials_rejected');

    // An assertion for another audience is refused by the token endpoint.
    const wrongAud = new GoogleAccessTokens({ tokenUrl: `${google.tokenUrl}?audience=other`, timeoutMs: 5000 });
    expect(failure(await wrongAud.get(key))).toMatchObject({ kind: 'credentials_rejected' });

    const noAccessFile = await generateServiceAccountKey();
    google.registerServiceAccount(noAccessFile, ['com.example.other']);
    const noAccess = client({ credentials: parseServiceAccountKey(noAccessFile) });
    expect(failure(await noAccess.getProductPurchase(PKG, p.productId, p.token))).toEqual({
      kind: 'credentials_rejected',
      detail: 'HTTP 403 PERMISSION_DENIED/permissionDenied',
    });
  });

  it('sends a path-injecting token or product id as one encoded segment, and refuses dot segments unsent', async () => {
    const c = client();
    const token = 'a/../../b?c=d#e%2F:consume';
    const productId = 'gems/../orders';
    purchase({ productId, token });
    const p = value(await c.getProductPurchase(PKG, productId, token));
    expect(p.state).toBe('purchased');
    const last = google.requests.at(-1)!;
    expect(last.kind).toBe('purchase');
    expect(last.rawPath).toBe(
      `/androidpublisher/v3/applications/${PKG}/purchases/products/gems%2F..%2Forders/tokens/a%2F..%2F..%2Fb%3Fc%3Dd%23e%252F%3Aconsume`,
    );
    expect(last.segments.slice(-3)).toEqual([productId, 'tokens', token]);
    value(await c.consume(PKG, productId, token));
    expect(google.requests.at(-1)).toMatchObject({ kind: 'consume', segments: expect.arrayContaining([productId, token]) });

    const before = counts();
    for (const bad of ['..', '.', '', 'x'.repeat(2049)]) {
      expect(failure(await c.getProductPurchase(PKG, 'gems_100', bad)).kind).toBe('invalid');
      expect(failure(await c.getProductPurchase(PKG, bad, 'tok')).kind).toBe('invalid');
      expect(failure(await c.consume(PKG, 'gems_100', bad)).kind).toBe('invalid');
      expect(failure(await c.getOrder(PKG, bad)).kind).toBe('invalid');
    }
    expect(counts()).toEqual(before);
  });

  it('fails an answer larger than 256 KiB', async () => {
    const p = purchase({ developerPayload: 'p'.repeat(300 * 1024) });
    expect(failure(await client().getProductPurchase(PKG, p.productId, p.token))).toMatchObject({
      kind: 'malformed',
      detail: expect.stringMatching(/^answer over 262144 bytes/),
    });
  });

  describe('answers that are not what Google documents', () => {
    let odd: Server;
    let answer = '';
    /** Sent in 64 KiB chunks without a content-length (so only the bytes read can bound it). */
    let chunked = false;
    beforeAll(async () => {
      odd = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        if (!chunked) return void res.end(answer);
        for (let i = 0; i < answer.length; i += 65_536) res.write(answer.slice(i, i + 65_536));
        res.end();
      });
      await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise<void>((resolve) => odd.close(() => resolve())));

    it('reports malformed for a body that is not JSON, a ProductPurchase out of its enums, or an Order without a readable total', async () => {
      const c = client({ apiUrl: `http://127.0.0.1:${(odd.address() as AddressInfo).port}` });
      answer = 'not json';
      expect(failure(await c.getProductPurchase(PKG, 'gems_100', 'tok')).kind).toBe('malformed');
      answer = JSON.stringify({ purchaseState: 7, consumptionState: 0, purchaseTimeMillis: '1' });
      expect(failure(await c.getProductPurchase(PKG, 'gems_100', 'tok')).kind).toBe('malformed');
      answer = JSON.stringify({ orderId: 'GPA.1', state: 'PROCESSED' });
      expect(failure(await c.getOrder(PKG, 'GPA.1')).kind).toBe('malformed');
      answer = JSON.stringify({ orderId: 'GPA.1', total: { currencyCode: 'USD', units: '1', nanos: -5 } });
      expect(failure(await c.getOrder(PKG, 'GPA.1')).kind).toBe('malformed');
      answer = JSON.stringify({ orderId: 'GPA.1', total: { currencyCode: 'USD', units: '-1', nanos: -750000000 } });
      expect(value(await c.getOrder(PKG, 'GPA.1')).price).toBe('-1.75');
    });

    it('stops reading a chunked answer past 256 KiB', async () => {
      const c = client({ apiUrl: `http://127.0.0.1:${(odd.address() as AddressInfo).port}` });
      chunked = true;
      answer = JSON.stringify({ purchaseState: 0, consumptionState: 0, purchaseTimeMillis: '1', developerPayload: 'p'.repeat(200 * 1024) });
      expect(value(await c.getProductPurchase(PKG, 'gems_100', 'tok')).state).toBe('purchased');
      answer = JSON.stringify({ purchaseState: 0, consumptionState: 0, purchaseTimeMillis: '1', developerPayload: 'p'.repeat(2 * 1024 * 1024) });
      expect(failure(await c.getProductPurchase(PKG, 'gems_100', 'tok'))).toMatchObject({
        kind: 'malformed',
        detail: expect.stringMatching(/^answer over 262144 bytes/),
      });
    });
  });
});
