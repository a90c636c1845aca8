import { generateKeyPairSync } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readContentFile } from '@ccs/shared';
import { createApp } from '../../../services/chests/test/support/chests.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { registerThroughGateway, type RegisteredPlayer } from '../../support/register.js';
import { eventually } from '../../support/stack.js';
import { generateServiceAccountKey, type RequestKind } from '../../support/store/google-stand-in.js';
import { balances, googleGems, newPlayer, startStoreStack, submitGoogle, type StoreStack } from '../../support/store/store-stack.js';

/** The store's row of a Google purchase, read from its schema (what the API does not show: consumption). */
interface StoredPurchase {
  player_id: string | null;
  state: string;
  price: string | null;
  currency: string | null;
  consumed_at: Date | null;
}

/**
 * Google Play purchases through the running stack against the local stand-in of Google: the
 * store reads the purchase (purchases.products.get) and its order (orders.get) with the app's
 * service account, grants it once, consumes it once; every refusal grants nothing; Google slow
 * or down answers 503 with Retry-After and a retry grants once; a consume that fails after the
 * grant is done later by the sweeper, once.
 */
describe('Google Play purchases', () => {
  let s: StoreStack;
  let db: pg.Client;

  beforeAll(async () => {
    s = await startStoreStack({ env: { STORE_GOOGLE_TIMEOUT_MS: '500', STORE_CONSUME_INTERVAL_MS: '100' } });
    db = new pg.Client({ connectionString: s.stack.env.DATABASE_URL, options: '-c search_path=store' });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await s?.close();
  });

  /** A new player whose welcome credits have landed (so balances read next are stable). */
  async function player(): Promise<RegisteredPlayer> {
    const p = await newPlayer(s);
    await eventually(async () => expect(Number((await balances(s, p.token)).gems)).toBe(15));
    return p;
  }

  const gems = async (p: RegisteredPlayer) => Number((await balances(s, p.token)).gems);

  async function stored(orderId: string): Promise<StoredPurchase | undefined> {
    const r = await db.query<StoredPurchase>(
      "SELECT player_id, state, price::text AS price, currency, consumed_at FROM purchases WHERE platform = 'google' AND transaction_id = $1",
      [orderId],
    );
    return r.rows[0];
  }

  /** How many requests of this kind the stand-in received for this purchase token. */
  const requestsFor = (kind: RequestKind, token: string, from = 0) =>
    s.google.requests.slice(from).filter((r) => r.kind === kind && r.segments[8] === token).length;

  /** Waits (by progress) until the store recorded the purchase consumed, then answers how many consumes Google received for it. */
  async function consumedOnce(orderId: string, token: string, from = 0): Promise<number> {
    await eventually(async () => expect((await stored(orderId))?.consumed_at).toBeInstanceOf(Date), 15_000, 50);
    expect(s.google.purchase('com.example.chests', 'gems_500', token)?.consumed).toBe(true);
    return requestsFor('consume', token, from);
  }

  describe('a completed purchase', () => {
    it('grants its product once, with the price of its order and the balances (read-your-writes), and consumes it once', async () => {
      const p = await player();
      const bought = googleGems(s, p.id);
      const res = await submitGoogle(s, p.token, 'gems_500', bought.token);
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json();
      expectJsonApi(body);
      expect(body.data.type).toBe('store_purchase');
      expect(body.data.attributes).toMatchObject({
        platform: 'google',
        product_id: 'gems-500',
        transaction_id: bought.orderId,
        state: 'granted',
        price: { amount: '4.99', currency: 'EUR' },
      });
      expect(body.meta.grants.currencies).toEqual([{ currency: 'gems', amount: '500' }]);
      expect(Number(body.meta.balances.gems)).toBe(515);
      expect(await gems(p)).toBe(515);
      expect(await stored(bought.orderId!)).toMatchObject({ player_id: p.id, state: 'granted', price: '4.990000', currency: 'EUR' });
      expect(await consumedOnce(bought.orderId!, bought.token)).toBe(1);
    });

    it('answers the same purchase token again to the same player as replayed (200, no second grant or consume) and refuses it to another player', async () => {
      const p = await player();
      const bought = googleGems(s, p.id, { obfuscatedExternalAccountId: undefined });
      const first = await submitGoogle(s, p.token, 'gems_500', bought.token);
      expect(first.statusCode, first.body).toBe(201);
      expect(await consumedOnce(bought.orderId!, bought.token)).toBe(1);

      const again = await submitGoogle(s, p.token, 'gems_500', bought.token);
      expect(again.statusCode, again.body).toBe(200);
      expectJsonApi(again.json());
      expect(again.json().meta.replayed).toBe(true);
      expect(again.json().data.id).toBe(first.json().data.id);
      expect(await gems(p)).toBe(515);

      const other = await player();
      expectError(await submitGoogle(s, other.token, 'gems_500', bought.token), 409, 'transaction_claimed');
      expect(await gems(other)).toBe(15);
      expect(await gems(p)).toBe(515);
      expect(requestsFor('consume', bought.token)).toBe(1);
    });
  });

  describe('what Google reports', () => {
    it('grants a multi-quantity purchase as many times as bought, at the order’s total', async () => {
      const p = await player();
      const bought = googleGems(s, p.id, { quantity: 3, price: '14.97' });
      const res = await submitGoogle(s, p.token, 'gems_500', bought.token);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data.attributes).toMatchObject({ quantity: 3, price: { amount: '14.97', currency: 'EUR' } });
      expect(res.json().meta.grants.currencies).toEqual([{ currency: 'gems', amount: '1500' }]);
      expect(await gems(p)).toBe(1515);
    });

    it('grants a purchase without an order (a promo code) once, with no price', async () => {
      const p = await player();
      const bought = googleGems(s, p.id, { orderId: null, purchaseType: 1 });
      const before = s.google.counts.order;
      const res = await submitGoogle(s, p.token, 'gems_500', bought.token);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data.attributes.price).toBeNull();
      expect(s.google.counts.order).toBe(before);
      expect((await submitGoogle(s, p.token, 'gems_500', bought.token)).statusCode).toBe(200);
      expect(await gems(p)).toBe(515);
    });

    it('keeps a purchase token one path segment whatever it contains; a dot segment is refused before anything is sent', async () => {
      const p = await player();
      const bought = googleGems(s, p.id, { token: 'a/../b?c=d#e%2Ff:consume' });
      const res = await submitGoogle(s, p.token, 'gems_500', bought.token);
      expect(res.statusCode, res.body).toBe(201);
      expect(await gems(p)).toBe(515);
      const before = { ...s.google.counts };
      expectError(await submitGoogle(s, p.token, 'gems_500', '..'), 422, 'receipt_invalid');
      expect(s.google.counts.purchase).toBe(before.purchase);
    });

    it('renews an access token Google ended early, once, and grants', async () => {
      const p = await player();
      s.google.expireAccessTokens();
      const tokens = s.google.counts.token;
      const res = await submitGoogle(s, p.token, 'gems_500', googleGems(s, p.id).token);
      expect(res.statusCode, res.body).toBe(201);
      expect(s.google.counts.token).toBe(tokens + 1);
    });

    it('answers 503 store_credentials_rejected when the service account lost access to the app, granting nothing; once access is back it grants', async () => {
      const p = await player();
      const bought = googleGems(s, p.id);
      s.google.revokeAccess(s.serviceAccount.client_email, 'com.example.chests');
      try {
        const res = await submitGoogle(s, p.token, 'gems_500', bought.token);
        expectError(res, 503, 'store_credentials_rejected');
        expect(res.headers['retry-after']).toBeDefined();
        expect(await gems(p)).toBe(15);
      } finally {
        s.google.registerServiceAccount(s.serviceAccount, ['com.example.chests']);
      }
      expect((await submitGoogle(s, p.token, 'gems_500', bought.token)).statusCode).toBe(201);
      expect(await gems(p)).toBe(515);
    });
  });

  describe('refusals grant nothing', () => {
    it('refuses a cancelled purchase (422 receipt_revoked), a pending one (409 purchase_pending), another player’s (422 receipt_wrong_player) and an unknown token (422 receipt_invalid)', async () => {
      const p = await player();
      const other = await player();
      const cases: Array<[string, number, string]> = [
        [googleGems(s, p.id, { state: 'cancelled' }).token, 422, 'receipt_revoked'],
        [googleGems(s, p.id, { state: 'pending' }).token, 409, 'purchase_pending'],
        [googleGems(s, other.id).token, 422, 'receipt_wrong_player'],
        ['tok-nobody-ever-bought-this', 422, 'receipt_invalid'],
      ];
      for (const [token, status, code] of cases) {
        const errors = expectError(await submitGoogle(s, p.token, 'gems_500', token), status, code);
        expect(errors[0]!.source?.pointer).toBe('/data/attributes/purchase_token');
        expect(requestsFor('consume', token)).toBe(0);
      }
      expect(await gems(p)).toBe(15);
      const r = await db.query('SELECT count(*)::int AS n FROM purchases WHERE player_id = $1', [p.id]);
      expect(r.rows[0].n).toBe(0);
    });

    it('refuses a product id the content does not sell (422 unknown_product) without calling Google', async () => {
      const p = await player();
      const bought = googleGems(s, p.id, { productId: 'gems_9000' });
      const before = { ...s.google.counts };
      const errors = expectError(await submitGoogle(s, p.token, 'gems_9000', bought.token), 422, 'unknown_product');
      expect(errors[0]!.source?.pointer).toBe('/data/attributes/product_id');
      expect(s.google.counts).toEqual(before);
      expect(await gems(p)).toBe(15);
    });

    it('refuses a purchase of an app that set no Google credentials (409 store_not_configured) without calling Google', async () => {
      const other = await createApp(s.stack, readContentFile());
      const p = await registerThroughGateway(s.stack, other.publishableKey);
      const bought = googleGems(s, p.id);
      const before = { ...s.google.counts };
      // The store learns the new app's content asynchronously; once it has, the missing key is what it names.
      await eventually(async () => {
        const errors = expectError(await submitGoogle(s, p.token, 'gems_500', bought.token, other.publishableKey), 409, 'store_not_configured');
        expect(errors[0]!.detail).toContain('service-account key');
      }, 15_000);
      expect(s.google.counts).toEqual(before);
    });
  });

  describe('Google slow or down', () => {
    /** Submits while Google is faulty (503 store_unavailable with Retry-After, nothing granted), then heals it and submits again (201, granted once). */
    async function refusedThenGranted(fault: () => void, retryAfter?: string) {
      const p = await player();
      const bought = googleGems(s, p.id);
      fault();
      try {
        const res = await submitGoogle(s, p.token, 'gems_500', bought.token);
        expectError(res, 503, 'store_unavailable');
        const wait = res.headers['retry-after'];
        expect(Number(wait)).toBeGreaterThanOrEqual(1);
        expect(res.json().errors[0].meta.retry_after_seconds).toBe(Number(wait));
        if (retryAfter) expect(wait).toBe(retryAfter);
        expect(await stored(bought.orderId!)).toBeUndefined();
        expect(await gems(p)).toBe(15);
      } finally {
        s.google.heal();
      }
      const again = await submitGoogle(s, p.token, 'gems_500', bought.token);
      expect(again.statusCode, again.body).toBe(201);
      expect(await gems(p)).toBe(515);
      const third = await submitGoogle(s, p.token, 'gems_500', bought.token);
      expect(third.statusCode, third.body).toBe(200);
      expect(await gems(p)).toBe(515);
      expect(await consumedOnce(bought.orderId!, bought.token)).toBe(1);
    }

    it('answers 503 store_unavailable with Retry-After when Google holds its answer past STORE_GOOGLE_TIMEOUT_MS; the same request later grants once', async () => {
      await refusedThenGranted(() => s.google.hold());
    });

    it('answers 503 when only the order (orders.get, the price) does not come in time: nothing is granted from half an answer', async () => {
      await refusedThenGranted(() => s.google.hold(['order']));
    });

    it('answers 503 with Google’s Retry-After when Google answers 503', async () => {
      await refusedThenGranted(() => s.google.down({ status: 503, retryAfter: '7' }), '7');
    });

    it('answers 503 when Google closes the connection', async () => {
      await refusedThenGranted(() => s.google.down('close'));
    });

    it('consumes a purchase once when Google is slow to consume (the consume after the answer and the sweeper never both send it)', async () => {
      const p = await player();
      const bought = googleGems(s, p.id);
      s.google.slow(350, ['consume']);
      try {
        const res = await submitGoogle(s, p.token, 'gems_500', bought.token);
        expect(res.statusCode, res.body).toBe(201);
        expect(await consumedOnce(bought.orderId!, bought.token)).toBe(1);
        // Another purchase granted and consumed meanwhile (the sweeper passes on): still one consume of the first.
        const later = googleGems(s, p.id);
        expect((await submitGoogle(s, p.token, 'gems_500', later.token)).statusCode).toBe(201);
        await consumedOnce(later.orderId!, later.token);
        expect(requestsFor('consume', bought.token)).toBe(1);
      } finally {
        s.google.heal();
      }
    });

    it('grants and answers 201 when the consume fails after the grant; once Google is back the sweeper consumes it, once', async () => {
      const p = await player();
      const bought = googleGems(s, p.id);
      s.google.down({ status: 503 }, ['consume']);
      let healedAt: number;
      try {
        const res = await submitGoogle(s, p.token, 'gems_500', bought.token);
        expect(res.statusCode, res.body).toBe(201);
        expect(Number(res.json().meta.balances.gems)).toBe(515);
        // The consume was tried, and failed: nothing consumed yet.
        await eventually(async () => expect(requestsFor('consume', bought.token)).toBeGreaterThanOrEqual(1), 10_000, 20);
        expect((await stored(bought.orderId!))?.consumed_at).toBeNull();
        expect(s.google.purchase('com.example.chests', 'gems_500', bought.token)?.consumed).toBe(false);
      } finally {
        healedAt = s.google.requests.length;
        s.google.heal();
      }
      expect(await consumedOnce(bought.orderId!, bought.token, healedAt)).toBe(1);
      expect(await gems(p)).toBe(515);
    });
  });

  describe('the Google credentials (PUT /api/v1/admin/store/google-credentials)', () => {
    const putKey = (payload: unknown, apiKey = s.secretKey) =>
      s.stack.inject({
        method: 'PUT',
        url: '/api/v1/admin/store/google-credentials',
        headers: { apikey: apiKey, 'content-type': 'application/json' },
        payload: payload as Record<string, unknown>,
      });

    async function clientEmailShown(): Promise<string | null> {
      const res = await s.stack.inject({ method: 'GET', url: '/api/v1/admin/store/products', headers: { apikey: s.secretKey } });
      expect(res.statusCode, res.body).toBe(200);
      expectJsonApi(res.json());
      return res.json().meta.google_client_email;
    }

    it('stores the key file sealed: neither the private key nor the client email is in clear in the sealed column', async () => {
      const r = await db.query<{ client_email: string; private_key_id: string; sealed_key: string }>(
        'SELECT client_email, private_key_id, sealed_key FROM google_credentials WHERE app_id = $1',
        [s.appId],
      );
      expect(r.rows).toHaveLength(1);
      const row = r.rows[0]!;
      expect(row.client_email).toBe(s.serviceAccount.client_email);
      expect(row.private_key_id).toBe(s.serviceAccount.private_key_id);
      const pemBody = s.serviceAccount.private_key.split('\n').filter((l) => l && !l.startsWith('-----'));
      expect(row.sealed_key).not.toContain('PRIVATE KEY');
      for (const line of pemBody) expect(row.sealed_key).not.toContain(line);
      expect(row.sealed_key).not.toContain(s.serviceAccount.client_email);
      expect(row.sealed_key).not.toContain(Buffer.from(s.serviceAccount.client_email).toString('base64').slice(0, 16));
      expect(await clientEmailShown()).toBe(s.serviceAccount.client_email);
    });

    it('refuses a malformed key file with 422 google_credentials_invalid naming its fields, never echoing the key, and keeps the stored one', async () => {
      const { privateKey: ecKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const ecPem = ecKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      const cases: Array<[Record<string, unknown>, string[]]> = [
        [{ ...s.serviceAccount, type: 'authorized_user', client_email: 'not an email' }, ['type', 'client_email']],
        [{ ...s.serviceAccount, private_key_id: undefined, project_id: undefined }, ['private_key_id', 'project_id']],
        [{ ...s.serviceAccount, private_key: ecPem }, ['private_key', 'RSA']],
        [{ ...s.serviceAccount, private_key: s.serviceAccount.private_key.replace(/[A-Za-z]{8}/, 'AAAAAAAA') }, ['private_key']],
      ];
      for (const [file, named] of cases) {
        const res = await putKey(file);
        const errors = expectError(res, 422, 'google_credentials_invalid');
        for (const field of named) expect(errors[0]!.detail).toContain(field);
        expect(res.body).not.toContain('PRIVATE KEY');
        const pem = String(file.private_key);
        for (const line of pem.split('\n').filter((l) => l && !l.startsWith('-----'))) expect(res.body).not.toContain(line);
      }
      expect(await clientEmailShown()).toBe(s.serviceAccount.client_email);
      // The stored key still works: a purchase verifies with it.
      const p = await newPlayer(s);
      const bought = googleGems(s, p.id);
      expect((await submitGoogle(s, p.token, 'gems_500', bought.token)).statusCode).toBe(201);
    });

    it('refuses the key file with a publishable key (403), changing nothing', async () => {
      const other = await generateServiceAccountKey({ account: 'someone-else' });
      expectError(await putKey(other, s.stack.apiKey), 403, 'secret_key_required');
      expect(await clientEmailShown()).toBe(s.serviceAccount.client_email);
    });
  });
});
