import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { readContentFile } from '@ccs/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, defaultCatalogIds, purchase } from '../../../services/chests/test/support/chests.js';
import { patchMe } from '../../../services/chests/test/support/compliance.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import type { RegisteredPlayer } from '../../support/register.js';
import { eventually, jsonApiHeaders } from '../../support/stack.js';
import { testNotification, voidedPurchaseNotification, type PushTokenSpec, type StandInPurchase } from '../../support/store/google-stand-in.js';
import {
  balances,
  googleGems,
  inventoryIds,
  newPlayer,
  PACKAGE,
  postGooglePush,
  PUSH_ACCOUNT,
  PUSH_AUDIENCE,
  startStoreStack,
  submitGoogle,
  type StoreStack,
} from '../../support/store/store-stack.js';

/**
 * Google Play refunds through the running stack: real-time developer notifications pushed by
 * Pub/Sub to POST /api/v1/stores/google/notifications/{app_id}, authenticated by the push's OIDC
 * token (signed by the stand-in's Google key, published in its JWKS), for the audience and
 * service account of the demo content's store.google.notifications. A voided purchase takes back
 * what it granted once per orderId; every push that does not verify is 401 and changes nothing.
 */
describe('Google Play refunds (real-time developer notifications)', () => {
  let s: StoreStack;
  let db: pg.Client;

  beforeAll(async () => {
    s = await startStoreStack();
    db = new pg.Client({ connectionString: s.stack.env.DATABASE_URL, options: '-c search_path=store' });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await s?.close();
  });

  const GOOD: PushTokenSpec = { audience: PUSH_AUDIENCE, email: PUSH_ACCOUNT };

  /** A push of the voided notification of this purchase (a new Pub/Sub message each time), with a token as `spec` says. */
  function pushVoided(bought: StandInPurchase, spec: Partial<PushTokenSpec> = {}, packageName = PACKAGE) {
    const { authorization, body } = s.google.push(
      { ...GOOD, ...spec },
      voidedPurchaseNotification({ packageName, purchaseToken: bought.token, orderId: bought.orderId! }),
    );
    return postGooglePush(s, body, authorization);
  }

  /** A push answered 200 with this outcome (a JSON:API document with meta only). */
  function expectOutcome(res: Awaited<ReturnType<typeof postGooglePush>>, outcome: string) {
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    expect(body.meta.outcome).toBe(outcome);
  }

  /** A new player whose welcome credits have landed. */
  async function player(): Promise<RegisteredPlayer> {
    const p = await newPlayer(s);
    await eventually(async () => expect(Number((await balances(s, p.token)).gems)).toBe(15));
    return p;
  }

  /** A Google purchase of `productId` submitted and granted to the player. */
  async function bought(p: RegisteredPlayer, productId = 'gems_500') {
    const b = googleGems(s, p.id, { productId });
    const res = await submitGoogle(s, p.token, productId, b.token);
    expect(res.statusCode, res.body).toBe(201);
    return { purchase: b, chests: (res.json().meta.grants.chests ?? []) as { id: string }[] };
  }

  /** The store's state of a transaction and how many refunds it has. */
  async function storeState(orderId: string) {
    const r = await db.query<{ state: string; refunds: number }>(
      `SELECT p.state, (SELECT count(*)::int FROM refunds r WHERE r.purchase_id = p.id) AS refunds
         FROM purchases p WHERE platform = 'google' AND transaction_id = $1`,
      [orderId],
    );
    return r.rows[0];
  }

  // First in the file: the key set is fetched once and cached, so only a fresh service can find it unreachable.
  it('answers 503 store_unavailable (Pub/Sub pushes again) while Google’s key set cannot be fetched, changing nothing', async () => {
    const p = await player();
    const { purchase: b } = await bought(p);
    for (const fault of [() => s.google.down({ status: 503 }, ['jwks']), () => s.google.down('close', ['jwks'])]) {
      fault();
      try {
        const res = await pushVoided(b);
        expectError(res, 503, 'store_unavailable');
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      } finally {
        s.google.heal();
      }
      expect(await storeState(b.orderId!)).toEqual({ state: 'granted', refunds: 0 });
    }
    expect(s.google.counts.jwks).toBeGreaterThanOrEqual(2);
    expectOutcome(await pushVoided(b), 'applied');
    await eventually(async () => expect(Number((await balances(s, p.token)).gems)).toBe(15));
  });

  it('takes back a voided purchase’s gems once, below zero when they were spent (a debt); the same void pushed again is a duplicate', async () => {
    const p = await player();
    const { purchase: b } = await bought(p);
    // Spend 50 of the 515 gems on a Golden Chest (gems are paid currency: an allowed country and age first).
    expect((await patchMe(s.stack, p, { country: 'DE', birth_year: 1990 })).statusCode).toBe(200);
    const golden = (await defaultCatalogIds(s.stack))['Golden Chest']!;
    const spent = await purchase(s.stack, p, golden, 'gems');
    expect(spent.statusCode, spent.body).toBe(201);
    expect(Number((await balances(s, p.token)).gems)).toBe(465);

    expectOutcome(await pushVoided(b), 'applied');
    expect(await storeState(b.orderId!)).toEqual({ state: 'refunded', refunds: 1 });
    const gems = await eventually(async () => {
      const res = await s.stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: jsonApiHeaders(s.stack.apiKey, p.token) });
      const g = res.json().data.find((c: { attributes: { code: string } }) => c.attributes.code === 'gems');
      expect(g.attributes.balance.amount).toBe('-35.00');
      return g;
    });
    expect(gems.meta).toEqual({ debt: '35.00' });

    // Pub/Sub delivers the same void again as another message (or Google sends it twice): nothing more.
    expectOutcome(await pushVoided(b), 'duplicate');
    expect(await storeState(b.orderId!)).toEqual({ state: 'refunded', refunds: 1 });
    expect((await balances(s, p.token)).gems).toBe('-35.00');
    // And the purchase cannot be granted again: the same token answers the refunded purchase, nothing granted.
    const again = await submitGoogle(s, p.token, 'gems_500', b.token);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data.attributes.state).toBe('refunded');
    expect((await balances(s, p.token)).gems).toBe('-35.00');
  });

  it('revokes the unopened chests of a voided starter pack and takes back its currencies', async () => {
    const p = await player();
    const before = await balances(s, p.token);
    const { purchase: b, chests } = await bought(p, 'starter_pack');
    expect(chests).toHaveLength(2);
    const inventory = await inventoryIds(s, p.token);
    for (const c of chests) expect(inventory).toContain(c.id);

    expectOutcome(await pushVoided(b), 'applied');
    await eventually(async () => {
      const now = await inventoryIds(s, p.token);
      for (const c of chests) expect(now).not.toContain(c.id);
      expect(now).toContain(p.starterChestId);
      expect(await balances(s, p.token)).toEqual(before);
    });
  });

  it('refuses a push that does not verify with 401 and changes nothing: no token, a wrong audience or email, an unverified email, an expired token, another signer, alg none', async () => {
    const p = await player();
    const { purchase: b } = await bought(p);
    const refused: Array<Partial<PushTokenSpec>> = [
      { audience: 'https://elsewhere.example.com/push' },
      { email: 'someone-else@example-chests.iam.gserviceaccount.com' },
      { emailVerified: false },
      { expiresInSeconds: -120 },
      { issuer: 'https://evil.example.com' },
      { signer: 'stranger' },
      { signer: 'none' },
    ];
    for (const spec of refused) expectError(await pushVoided(b, spec), 401, 'notification_invalid');
    const { body } = s.google.push(GOOD, voidedPurchaseNotification({ packageName: PACKAGE, purchaseToken: b.token, orderId: b.orderId! }));
    expectError(await postGooglePush(s, body), 401, 'notification_invalid');
    expectError(await postGooglePush(s, body, `Basic ${Buffer.from('user:pass').toString('base64')}`), 401, 'notification_invalid');
    expect(await storeState(b.orderId!)).toEqual({ state: 'granted', refunds: 0 });
    const n = await db.query('SELECT count(*)::int AS n FROM notifications WHERE transaction_id = $1', [b.orderId]);
    expect(n.rows[0].n).toBe(0);
    expect(Number((await balances(s, p.token)).gems)).toBe(515);
  });

  it('acknowledges a test notification (200 ignored); refuses another package (422 receipt_wrong_app), a message that is no notification (422) and an unknown app (404)', async () => {
    const test = s.google.push(GOOD, testNotification(PACKAGE));
    expectOutcome(await postGooglePush(s, test.body, test.authorization), 'ignored');

    const p = await player();
    const { purchase: b } = await bought(p);
    expectError(await pushVoided(b, {}, 'com.example.other'), 422, 'receipt_wrong_app');
    const garbled = s.google.push(GOOD, {});
    garbled.body.message.data = Buffer.from('not json').toString('base64');
    expectError(await postGooglePush(s, garbled.body, garbled.authorization), 422, 'notification_malformed');
    const good = s.google.push(GOOD, voidedPurchaseNotification({ packageName: PACKAGE, purchaseToken: b.token, orderId: b.orderId! }));
    expectError(await postGooglePush(s, good.body, good.authorization, randomUUID()), 404, 'app_not_found');
    expect(await storeState(b.orderId!)).toEqual({ state: 'granted', refunds: 0 });
  });

  it('refuses the purchase of a void that came first (422 receipt_revoked), granting nothing', async () => {
    const p = await player();
    const b = googleGems(s, p.id);
    expectOutcome(await pushVoided(b), 'applied');
    expectError(await submitGoogle(s, p.token, 'gems_500', b.token), 422, 'receipt_revoked');
    expect(Number((await balances(s, p.token)).gems)).toBe(15);
  });

  it('takes no notice of another app’s push naming this app’s order: the genuine void still applies (another tenant cannot use up its id)', async () => {
    // Another studio's app: any studio can publish what it likes to its own Pub/Sub topic, and its push is signed by Google.
    const content = readContentFile();
    content.store!.google!.package_name = 'com.example.other';
    const other = await createApp(s.stack, content);
    const p = await player();
    const { purchase: b } = await bought(p);
    const forged = s.google.push(
      GOOD,
      voidedPurchaseNotification({ packageName: 'com.example.other', purchaseToken: 'tok-anything', orderId: b.orderId! }),
    );
    // The store learns the other app's content asynchronously: until then the push names an unknown app.
    await eventually(async () => expectOutcome(await postGooglePush(s, forged.body, forged.authorization, other.appId), 'ignored'), 15_000);
    expect(await storeState(b.orderId!)).toEqual({ state: 'granted', refunds: 0 });

    expectOutcome(await pushVoided(b), 'applied');
    expect(await storeState(b.orderId!)).toEqual({ state: 'refunded', refunds: 1 });
    await eventually(async () => expect(Number((await balances(s, p.token)).gems)).toBe(15));
  });

  it('shows each product’s purchases, refunds and refund rate, and the service account in use, to the studio', async () => {
    const products = async () => {
      const res = await s.stack.inject({ method: 'GET', url: '/api/v1/admin/store/products', headers: { apikey: s.secretKey } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expectJsonApi(body);
      expect(body.meta.google_client_email).toBe(s.serviceAccount.client_email);
      const byId = Object.fromEntries(body.data.map((d: { id: string; attributes: Record<string, unknown> }) => [d.id, d.attributes]));
      return byId as Record<string, { purchases: number; refunded: number; refund_rate: number | null; google_product_id: string }>;
    };
    const before = (await products())['gems-100']!;
    expect(before).toMatchObject({ purchases: 0, refunded: 0, refund_rate: null, google_product_id: 'gems_100' });
    const p = await player();
    const kept = await bought(p, 'gems_100');
    const voided = await bought(p, 'gems_100');
    expect(kept.purchase.orderId).not.toBe(voided.purchase.orderId);
    expect((await products())['gems-100']).toMatchObject({ purchases: 2, refunded: 0, refund_rate: 0 });
    expectOutcome(await pushVoided(voided.purchase), 'applied');
    expect((await products())['gems-100']).toMatchObject({ purchases: 2, refunded: 1, refund_rate: 0.5 });
  });
});
