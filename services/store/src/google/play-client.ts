import type { GoogleAccessTokens } from './access-tokens.js';
import { exchange, fail, jsonOf, statusFailure, type GoogleAnswer, type GoogleResult } from './http.js';
import { decimalOf, OrderSchema, ProductPurchaseSchema } from './play-schemas.js';
import type { ServiceAccountKey } from './service-account.js';

/** A one-time product purchase as Google reports it (purchases.products.get), in the store's words. */
export interface GooglePurchase {
  /** purchaseState: 0 purchased, 1 canceled, 2 pending. Only `purchased` may be granted. */
  state: 'purchased' | 'cancelled' | 'pending';
  /** consumptionState 1. */
  consumed: boolean;
  /** acknowledgementState 1. */
  acknowledged: boolean;
  /** The order id (GPA.…); Google may leave it out when no order is associated (promo codes). */
  orderId: string | undefined;
  purchaseTimeMillis: number;
  /** Units bought (Google omits it for 1). */
  quantity: number;
  /** 0 test (license tester), 1 promo, 2 rewarded; undefined for a standard purchase. */
  purchaseType: number | undefined;
  /** What the game set when launching the billing flow (the store's player id), when set. */
  obfuscatedExternalAccountId: string | undefined;
  obfuscatedExternalProfileId: string | undefined;
  /** ISO 3166-1 alpha-2 region of the buyer. */
  regionCode: string | undefined;
}

/** An order as Google reports it (orders.get): what the buyer paid. */
export interface GoogleOrder {
  orderId: string;
  /** Order state (PROCESSED, PENDING, CANCELED, REFUNDED...), as Google names it. */
  state: string | undefined;
  /** `total` (after discounts and taxes) as a decimal string, e.g. "4.99". */
  price: string;
  /** ISO 4217 code, e.g. "USD". */
  currency: string;
}

export interface GooglePlayClientOptions {
  /** STORE_GOOGLE_API_URL (no trailing path). */
  apiUrl: string;
  /** STORE_GOOGLE_TIMEOUT_MS: one deadline per call, covering the access token, the request and a retry. */
  timeoutMs: number;
  /** The service-wide token cache. */
  tokens: GoogleAccessTokens;
  /** The app's service account. */
  credentials: ServiceAccountKey;
}

/** Longest path parameter sent (Google's purchase tokens are a few hundred characters). */
const MAX_SEGMENT = 2048;

/**
 * One path segment, percent-encoded so that player input stays one segment: `/`, `?`, `#`, `%`
 * and `:` are encoded; an empty, `.` or `..` segment (which URL parsing would drop or resolve)
 * and an overlong one are refused before anything is sent.
 */
export function pathSegment(value: string): string | undefined {
  if (value.length === 0 || value.length > MAX_SEGMENT || value === '.' || value === '..') return undefined;
  return encodeURIComponent(value);
}

const STATES = ['purchased', 'cancelled', 'pending'] as const;

/**
 * The Google Play Developer API calls the store makes for one app, with its service account:
 * purchases.products.get, purchases.products.consume and orders.get. Each call has one deadline
 * (the token, the request and its retry included) and reads at most 256 KiB; an access token
 * Google refuses once (401: expired or revoked early) is renewed and the call retried once.
 * Never throws: outcomes are GoogleResult values (see GoogleFailure for their kinds).
 */
export class GooglePlayClient {
  private readonly base: string;

  constructor(private readonly options: GooglePlayClientOptions) {
    this.base = options.apiUrl.replace(/\/+$/, '');
  }

  /** GET …/applications/{packageName}/purchases/products/{productId}/tokens/{token}. */
  async getProductPurchase(packageName: string, productId: string, token: string): Promise<GoogleResult<GooglePurchase>> {
    const path = this.path(['applications', packageName, 'purchases', 'products', productId, 'tokens', token]);
    if (!path) return fail({ kind: 'invalid', detail: 'a path parameter is empty, a dot segment or too long' });
    const answered = await this.call('GET', path);
    if (!answered.ok) return answered;
    const parsed = ProductPurchaseSchema.safeParse(jsonOf(answered.value.body));
    if (!parsed.success) return fail({ kind: 'malformed', detail: 'purchases.products.get answer is not a ProductPurchase' });
    const p = parsed.data;
    return {
      ok: true,
      value: {
        state: STATES[p.purchaseState],
        consumed: p.consumptionState === 1,
        acknowledged: p.acknowledgementState === 1,
        orderId: p.orderId,
        purchaseTimeMillis: p.purchaseTimeMillis,
        quantity: p.quantity ?? 1,
        purchaseType: p.purchaseType,
        obfuscatedExternalAccountId: p.obfuscatedExternalAccountId || undefined,
        obfuscatedExternalProfileId: p.obfuscatedExternalProfileId || undefined,
        regionCode: p.regionCode,
      },
    };
  }

  /** GET …/applications/{packageName}/orders/{orderId}: the order's `total` as price and currency. */
  async getOrder(packageName: string, orderId: string): Promise<GoogleResult<GoogleOrder>> {
    const path = this.path(['applications', packageName, 'orders', orderId]);
    if (!path) return fail({ kind: 'invalid', detail: 'a path parameter is empty, a dot segment or too long' });
    const answered = await this.call('GET', path);
    if (!answered.ok) return answered;
    const parsed = OrderSchema.safeParse(jsonOf(answered.value.body));
    if (!parsed.success) return fail({ kind: 'malformed', detail: 'orders.get answer is not an Order with a total' });
    const price = decimalOf(parsed.data.total);
    if (price === undefined) return fail({ kind: 'malformed', detail: 'orders.get total has units and nanos of opposite signs' });
    return { ok: true, value: { orderId: parsed.data.orderId, state: parsed.data.state, price, currency: parsed.data.total.currencyCode } };
  }

  /** POST …/applications/{packageName}/purchases/products/{productId}/tokens/{token}:consume (empty body both ways). */
  async consume(packageName: string, productId: string, token: string): Promise<GoogleResult<void>> {
    const path = this.path(['applications', packageName, 'purchases', 'products', productId, 'tokens', token]);
    if (!path) return fail({ kind: 'invalid', detail: 'a path parameter is empty, a dot segment or too long' });
    const answered = await this.call('POST', `${path}:consume`);
    if (!answered.ok) return answered;
    return { ok: true, value: undefined };
  }

  /** The API path for these segments, each encoded; undefined if one cannot be sent safely. */
  private path(segments: string[]): string | undefined {
    const encoded = segments.map(pathSegment);
    if (encoded.some((s) => s === undefined)) return undefined;
    return `/androidpublisher/v3/${encoded.join('/')}`;
  }

  /** One authorized call within one deadline: a 2xx answer, or its failure; a first 401 renews the token and retries once. */
  private async call(method: 'GET' | 'POST', path: string): Promise<GoogleResult<GoogleAnswer>> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const { tokens, credentials } = this.options;
    for (let attempt = 1; ; attempt++) {
      const token = await tokens.get(credentials, signal);
      if (!token.ok) return token;
      const answered = await exchange({
        method,
        url: `${this.base}${path}`,
        headers: { authorization: `Bearer ${token.value}`, accept: 'application/json' },
        // An empty POST body still goes out with `content-length: 0`, as Google's front end requires.
        ...(method === 'POST' ? { body: '' } : {}),
        signal,
      });
      if (!answered.ok) return answered;
      const { status } = answered.value;
      if (status >= 200 && status < 300) return answered;
      if (status === 401 && attempt === 1) {
        tokens.invalidate(credentials, token.value);
        continue;
      }
      return fail(statusFailure(answered.value));
    }
  }
}
