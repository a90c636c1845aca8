import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { readContentFile, ResolveApiKey, type AppContent } from '@ccs/shared';
import { jsonApiHeaders, startStack, type TestStack } from '../stack.js';
import { expectJsonApi } from '../jsonapi-schema.js';
import { registerThroughGateway, type RegisteredPlayer } from '../register.js';
import { applePki, type ApplePki, type AppleTransactionPayload } from './apple-pki.js';
import { generateServiceAccountKey, GoogleStandIn, type PurchaseSpec, type ServiceAccountKeyFile } from './google-stand-in.js';

/**
 * A stack whose store trusts a test certificate authority (STORE_APPLE_ROOT_CERTS) and calls a
 * local stand-in of Google (STORE_GOOGLE_*), with the demo content's store section: bundle and
 * package `com.example.chests`, Apple's Sandbox, products gems-100, gems-500 and starter-pack.
 */
export interface StoreStack {
  stack: TestStack;
  pki: ApplePki;
  google: GoogleStandIn;
  /** The demo app's Google service-account key, set through the admin API and known to the stand-in. */
  serviceAccount: ServiceAccountKeyFile;
  appId: string;
  secretKey: string;
  close(): Promise<void>;
}

export const PACKAGE = 'com.example.chests';
export const PUSH_AUDIENCE = 'https://chests.example.com/api/v1/stores/google/notifications';
export const PUSH_ACCOUNT = 'play-notifications@example-chests.iam.gserviceaccount.com';

/** The demo content (its store section included), optionally changed. */
export function storeContent(change: (c: AppContent) => void = () => undefined): AppContent {
  const c = structuredClone(readContentFile());
  change(c);
  return c;
}

export async function startStoreStack(opts: { env?: Record<string, string> } = {}): Promise<StoreStack> {
  const [pki, google] = await Promise.all([applePki(), new GoogleStandIn().start()]);
  const secretKey = `sk_${randomUUID().replace(/-/g, '')}`;
  const stack = await startStack({
    env: {
      STORE_APPLE_ROOT_CERTS: pki.rootPem,
      STORE_GOOGLE_API_URL: google.apiUrl,
      STORE_GOOGLE_TOKEN_URL: google.tokenUrl,
      STORE_GOOGLE_OIDC_JWKS_URL: google.jwksUrl,
      CHESTS_DEMO_SECRET_KEY: secretKey,
      ...opts.env,
    },
  });
  const serviceAccount = await generateServiceAccountKey({ account: 'play-api' });
  google.registerServiceAccount(serviceAccount, [PACKAGE]);
  const set = await stack.inject({
    method: 'PUT',
    url: '/api/v1/admin/store/google-credentials',
    headers: { apikey: secretKey, 'content-type': 'application/json' },
    payload: serviceAccount,
  });
  expect(set.statusCode, set.body).toBe(204);
  const appId = (await stack.bus.request(ResolveApiKey, { apiKey: stack.apiKey }, { requestId: randomUUID() })).appId;
  return {
    stack,
    pki,
    google,
    serviceAccount,
    appId,
    secretKey,
    async close() {
      await stack.close();
      await google.stop();
    },
  };
}

/** A birth year that makes a player an adult all this year. */
export const ADULT_BIRTH_YEAR = 1990;

/**
 * A new player of the demo app who declared an adult birth year (`declared` replaces it): the demo
 * content applies the CN rule pack, whose spend limits in money hold a player of unknown age as
 * the youngest (no store payment at all).
 */
export async function newPlayer(
  s: StoreStack,
  declared: { country?: string; birth_year?: number } = { birth_year: ADULT_BIRTH_YEAR },
): Promise<RegisteredPlayer> {
  const p = await registerThroughGateway(s.stack);
  if (Object.keys(declared).length) {
    const res = await s.stack.inject({
      method: 'PATCH',
      url: '/api/v1/players/me',
      headers: jsonApiHeaders(s.stack.apiKey, p.token),
      payload: { data: { type: 'player', attributes: declared } },
    });
    expect(res.statusCode, res.body).toBe(200);
  }
  return p;
}

/** POST /api/v1/players/me/store/purchases with an App Store signed transaction. */
export function submitApple(s: StoreStack, token: string, signedTransaction: string, apiKey = s.stack.apiKey) {
  return s.stack.inject({
    method: 'POST',
    url: '/api/v1/players/me/store/purchases',
    headers: jsonApiHeaders(apiKey, token),
    payload: { data: { type: 'store_purchase', attributes: { platform: 'apple', signed_transaction: signedTransaction } } },
  });
}

/** POST /api/v1/players/me/store/purchases with a Google Play product and token. */
export function submitGoogle(s: StoreStack, token: string, productId: string, purchaseToken: string, apiKey = s.stack.apiKey) {
  return s.stack.inject({
    method: 'POST',
    url: '/api/v1/players/me/store/purchases',
    headers: jsonApiHeaders(apiKey, token),
    payload: { data: { type: 'store_purchase', attributes: { platform: 'google', product_id: productId, purchase_token: purchaseToken } } },
  });
}

/** An App Store transaction of the demo app for `player` (500 gems by default), signed by the test authority. */
export function appleGems(s: StoreStack, playerId: string, overrides: Partial<AppleTransactionPayload> = {}): Promise<string> {
  return s.pki.signTransaction({ productId: 'com.example.chests.gems_500', appAccountToken: playerId, price: 4990, currency: 'USD', ...overrides });
}

/** A completed Google Play purchase of the demo app registered with the stand-in (500 gems by default). */
export function googleGems(s: StoreStack, playerId: string, spec: Partial<PurchaseSpec> = {}) {
  return s.google.addPurchase({
    packageName: PACKAGE,
    productId: 'gems_500',
    token: `tok-${randomUUID()}`,
    obfuscatedExternalAccountId: playerId,
    price: '4.99',
    currency: 'EUR',
    ...spec,
  });
}

/** POST an App Store Server Notification V2 for the app. */
export function postAppleNotification(s: StoreStack, signedPayload: string, appId = s.appId) {
  return s.stack.inject({
    method: 'POST',
    url: `/api/v1/stores/apple/notifications/${appId}`,
    headers: { 'content-type': 'application/json' },
    payload: { signedPayload },
  });
}

/** POST a Pub/Sub push for the app, with the given Authorization (or none). */
export function postGooglePush(s: StoreStack, body: unknown, authorization?: string, appId = s.appId) {
  return s.stack.inject({
    method: 'POST',
    url: `/api/v1/stores/google/notifications/${appId}`,
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    payload: body as Record<string, unknown>,
  });
}

/** The caller's balances by currency code (GET /api/v1/currencies). */
export async function balances(s: StoreStack, token: string): Promise<Record<string, string>> {
  const res = await s.stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: jsonApiHeaders(s.stack.apiKey, token) });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expectJsonApi(body);
  return Object.fromEntries(
    body.data.map((c: { attributes: { code: string; balance: { amount: string } } }) => [c.attributes.code, c.attributes.balance.amount]),
  );
}

/** The caller's inventory chest ids. */
export async function inventoryIds(s: StoreStack, token: string): Promise<string[]> {
  const res = await s.stack.inject({
    method: 'GET',
    url: '/api/v1/players/me/chests?page[limit]=100',
    headers: jsonApiHeaders(s.stack.apiKey, token),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.map((c: { id: string }) => c.id);
}
