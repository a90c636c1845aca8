import { createPublicKey, generateKeyPair, randomBytes, randomInt, sign, verify, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Google, speaking the documented requests and answers of the parts the
 * store uses, so tests exercise the store's real HTTP, OAuth and JWT code against a peer that
 * refuses what Google refuses:
 *
 * - OAuth 2.0 token endpoint (POST /token): the JWT bearer grant of a service account. The
 *   assertion's RS256 signature is checked against the PUBLIC half of a key registered here
 *   (the private half is never kept), and its iss, aud (this endpoint's URL), scope, iat and
 *   exp (at most one hour). It issues opaque access tokens with `expires_in`.
 * - Google Play Developer API (androidpublisher v3): purchases.products.get, …:consume and
 *   orders.get, each requiring an access token it issued (401 otherwise), access to the app's
 *   package (403), and answering the purchases a test registers (404 for unknown ones). Path
 *   parameters are percent-decoded per segment, as Google does.
 * - Google's OIDC keys (GET /oauth2/v3/certs, a JWKS) and a Pub/Sub push simulator that signs
 *   push OIDC tokens with the key published there (or with a stranger's key, or none).
 *
 * Fault controls: slow (every answer delayed), hold (answers wait until `release()`), down (an
 * HTTP status such as 503 with an optional Retry-After, or the connection closed), each for all
 * request kinds or some; `counts` records every request by kind as it arrives.
 */

export type RequestKind = 'token' | 'purchase' | 'consume' | 'order' | 'jwks' | 'other';

/** A service-account JSON key file, laid out as the Google Cloud console issues it. */
export interface ServiceAccountKeyFile {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
  auth_provider_x509_cert_url: string;
  client_x509_cert_url: string;
  universe_domain: string;
}

export const ANDROID_PUBLISHER_SCOPE = 'https://www.googleapis.com/auth/androidpublisher';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function rsaKeyPair(): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
  return new Promise((resolve, reject) =>
    generateKeyPair('rsa', { modulusLength: 2048 }, (err, publicKey, privateKey) => (err ? reject(err) : resolve({ publicKey, privateKey }))),
  );
}

/** A new service account's key file (RSA 2048, PKCS#8 PEM), as Google's JSON key file looks. */
export async function generateServiceAccountKey(opts: { projectId?: string; account?: string } = {}): Promise<ServiceAccountKeyFile> {
  const { privateKey } = await rsaKeyPair();
  const projectId = opts.projectId ?? `ccs-test-${hex(3)}`;
  const email = `${opts.account ?? 'play-verifier'}@${projectId}.iam.gserviceaccount.com`;
  return {
    type: 'service_account',
    project_id: projectId,
    private_key_id: hex(20),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    client_email: email,
    client_id: String(randomInt(1e9, 1e10 - 1)) + String(randomInt(1e9, 1e10 - 1)) + String(randomInt(10, 99)),
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: 'https://oauth2.googleapis.com/token',
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(email)}`,
    universe_domain: 'googleapis.com',
  };
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** A compact JWS: RS256 with the key, or `alg: none` with an empty signature when no key is given. */
function compactJwt(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject | undefined): string {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  return `${input}.${key ? sign('sha256', Buffer.from(input), key).toString('base64url') : ''}`;
}

/** Splits and decodes a compact JWS; undefined when it is not one. */
function decodeJwt(jwt: string): { header: Record<string, unknown>; payload: Record<string, unknown>; input: string; signature: Buffer } | undefined {
  const parts = jwt.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    return { header, payload, input: `${parts[0]}.${parts[1]}`, signature: Buffer.from(parts[2]!, 'base64url') };
  } catch {
    return undefined;
  }
}

/** google.type.Money of a decimal string ("4.99" → units "4", nanos 990000000). */
function money(amount: string, currencyCode: string): { currencyCode: string; units: string; nanos: number } {
  const match = /^(-?)(\d+)(?:\.(\d{1,9}))?$/.exec(amount);
  if (!match) throw new Error(`not a decimal amount: ${amount}`);
  const sign = match[1] === '-' ? -1 : 1;
  const nanos = Number((match[3] ?? '').padEnd(9, '0')) * sign;
  return { currencyCode, units: `${sign < 0 && match[2] !== '0' ? '-' : ''}${match[2]}`, nanos: nanos === 0 ? 0 : nanos };
}

/** What a test registers: one in-app product purchase and its order. */
export interface PurchaseSpec {
  packageName: string;
  productId: string;
  token: string;
  state?: 'purchased' | 'cancelled' | 'pending';
  consumed?: boolean;
  acknowledged?: boolean;
  /** The order id (default: a new GPA.… id); null for a purchase without an order. */
  orderId?: string | null;
  /** The order's total, a decimal string (default "4.99"). */
  price?: string;
  currency?: string;
  quantity?: number;
  obfuscatedExternalAccountId?: string;
  obfuscatedExternalProfileId?: string;
  regionCode?: string;
  purchaseTimeMillis?: number;
  /** 0 test, 1 promo, 2 rewarded; absent for a standard purchase. */
  purchaseType?: number;
  developerPayload?: string;
}

export interface StandInPurchase extends Required<Pick<PurchaseSpec, 'packageName' | 'productId' | 'token' | 'state' | 'consumed' | 'acknowledged'>> {
  spec: PurchaseSpec;
  orderId: string | null;
}

interface Account {
  packages: Set<string>;
  /** Public keys by private_key_id. */
  keys: Map<string, KeyObject>;
}

interface IssuedToken {
  email: string;
  scope: string;
  expiresAt: number;
}

/** What a push's OIDC token says, and who signs it. */
export interface PushTokenSpec {
  audience: string;
  email: string;
  emailVerified?: boolean;
  issuer?: string;
  /** Seconds until `exp` (negative: already expired). Default 3600. */
  expiresInSeconds?: number;
  /** `google`: the key in the JWKS; `stranger`: a key Google never published; `none`: alg none, no signature. */
  signer?: 'google' | 'stranger' | 'none';
}

/** A Pub/Sub push request body (the wrapped form). */
export interface PushBody {
  message: { data: string; messageId: string; message_id: string; publishTime: string; publish_time: string; attributes?: Record<string, string> };
  subscription: string;
}

export interface Fault {
  /** Delay every answer by this many ms. */
  delayMs?: number;
  /** Hold every answer until release(). */
  hold?: boolean;
  /** Answer with this status (and Google's error body) instead. */
  status?: number;
  retryAfter?: string;
  /** Close the connection instead of answering. */
  close?: boolean;
  /** The kinds it applies to (default: all). */
  kinds?: RequestKind[];
}

type Json = Record<string, unknown>;

export class GoogleStandIn {
  private server: Server | undefined;
  private base = '';
  private readonly accounts = new Map<string, Account>();
  private readonly tokens = new Map<string, IssuedToken>();
  private readonly purchases = new Map<string, StandInPurchase>();
  private readonly orders = new Map<string, StandInPurchase>();
  private fault: Fault = {};
  private held: Array<() => void> = [];
  private googleKey!: { privateKey: KeyObject; publicKey: KeyObject; kid: string };
  private strangerKey!: { privateKey: KeyObject; publicKey: KeyObject };
  /** Requests by kind, counted as they arrive (a held or failed one counts too). */
  readonly counts: Record<RequestKind, number> = { token: 0, purchase: 0, consume: 0, order: 0, jwks: 0, other: 0 };
  /** Every request's kind, method and raw path (percent-encoding as sent). */
  readonly requests: Array<{ kind: RequestKind; method: string; rawPath: string; segments: string[] }> = [];
  /** Lifetime of the access tokens it issues, in seconds. */
  tokenLifetimeSeconds = 3599;

  async start(): Promise<this> {
    const [google, stranger] = await Promise.all([rsaKeyPair(), rsaKeyPair()]);
    this.googleKey = { ...google, kid: hex(20) };
    this.strangerKey = stranger;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => send(res, 500, googleError(500, `stand-in failure: ${String(err)}`, 'INTERNAL')));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** STORE_GOOGLE_API_URL. */
  get apiUrl(): string {
    return this.base;
  }
  /** STORE_GOOGLE_TOKEN_URL (and the `aud` assertions must carry). */
  get tokenUrl(): string {
    return `${this.base}/token`;
  }
  /** STORE_GOOGLE_OIDC_JWKS_URL. */
  get jwksUrl(): string {
    return `${this.base}/oauth2/v3/certs`;
  }

  // ---- accounts, tokens, purchases ----

  /** Registers a service account's key (only its public half is kept) with access to these packages. */
  registerServiceAccount(keyFile: Pick<ServiceAccountKeyFile, 'client_email' | 'private_key_id' | 'private_key'>, packages: string[]): void {
    const account = this.accounts.get(keyFile.client_email) ?? { packages: new Set<string>(), keys: new Map<string, KeyObject>() };
    account.keys.set(keyFile.private_key_id, createPublicKey(keyFile.private_key));
    for (const p of packages) account.packages.add(p);
    this.accounts.set(keyFile.client_email, account);
  }

  /** Deletes a key from its account (assertions it signs are refused from now on). */
  deleteKey(clientEmail: string, privateKeyId: string): void {
    this.accounts.get(clientEmail)?.keys.delete(privateKeyId);
  }

  /** Removes the account's access to a package (its calls get 403). */
  revokeAccess(clientEmail: string, packageName: string): void {
    this.accounts.get(clientEmail)?.packages.delete(packageName);
  }

  /** Ends every access token issued so far (as if they had expired): their next use gets 401. */
  expireAccessTokens(): void {
    for (const t of this.tokens.values()) t.expiresAt = 0;
  }

  addPurchase(spec: PurchaseSpec): StandInPurchase {
    const orderId =
      spec.orderId === null
        ? null
        : (spec.orderId ?? `GPA.${randomInt(1000, 9999)}-${randomInt(1000, 9999)}-${randomInt(1000, 9999)}-${randomInt(10000, 99999)}`);
    const purchase: StandInPurchase = {
      spec,
      packageName: spec.packageName,
      productId: spec.productId,
      token: spec.token,
      state: spec.state ?? 'purchased',
      consumed: spec.consumed ?? false,
      acknowledged: spec.acknowledged ?? false,
      orderId,
    };
    this.purchases.set(`${spec.packageName}\n${spec.productId}\n${spec.token}`, purchase);
    if (orderId) this.orders.set(`${spec.packageName}\n${orderId}`, purchase);
    return purchase;
  }

  purchase(packageName: string, productId: string, token: string): StandInPurchase | undefined {
    return this.purchases.get(`${packageName}\n${productId}\n${token}`);
  }

  // ---- faults ----

  slow(delayMs: number, kinds?: RequestKind[]): void {
    this.fault = { delayMs, kinds };
  }
  /** Holds answers until release(); `waiting` counts the held ones. */
  hold(kinds?: RequestKind[]): void {
    this.fault = { hold: true, kinds };
  }
  /** Answers with `status` (default 503, with Retry-After when given), or closes the connection. */
  down(mode: { status?: number; retryAfter?: string } | 'close' = {}, kinds?: RequestKind[]): void {
    this.fault = mode === 'close' ? { close: true, kinds } : { status: mode.status ?? 503, retryAfter: mode.retryAfter, kinds };
  }
  heal(): void {
    this.fault = {};
    this.release();
  }
  release(): void {
    if (this.fault.hold) this.fault = {};
    const held = this.held;
    this.held = [];
    for (const go of held) go();
  }
  get waiting(): number {
    return this.held.length;
  }

  // ---- Pub/Sub push simulator ----

  /** The OIDC token Pub/Sub would put in a push's Authorization header. */
  pushToken(spec: PushTokenSpec): string {
    const now = Math.floor(Date.now() / 1000);
    const payload = {
      aud: spec.audience,
      azp: String(randomInt(1e9, 1e10 - 1)),
      email: spec.email,
      email_verified: spec.emailVerified ?? true,
      exp: now + (spec.expiresInSeconds ?? 3600),
      iat: now + Math.min(0, spec.expiresInSeconds ?? 3600) - 60,
      iss: spec.issuer ?? 'https://accounts.google.com',
      sub: String(randomInt(1e9, 1e10 - 1)),
    };
    const signer = spec.signer ?? 'google';
    if (signer === 'none') return compactJwt({ alg: 'none', typ: 'JWT' }, payload, undefined);
    const key = signer === 'google' ? this.googleKey.privateKey : this.strangerKey.privateKey;
    return compactJwt({ alg: 'RS256', kid: this.googleKey.kid, typ: 'JWT' }, payload, key);
  }

  /** A push body carrying a DeveloperNotification (any JSON value, base64-encoded in message.data). */
  pushBody(notification: unknown, opts: { messageId?: string; subscription?: string; attributes?: Record<string, string> } = {}): PushBody {
    const messageId = opts.messageId ?? String(randomInt(1e11, 1e12 - 1));
    const publishTime = new Date().toISOString();
    return {
      message: {
        data: Buffer.from(JSON.stringify(notification)).toString('base64'),
        messageId,
        message_id: messageId,
        publishTime,
        publish_time: publishTime,
        ...(opts.attributes ? { attributes: opts.attributes } : {}),
      },
      subscription: opts.subscription ?? 'projects/ccs-test/subscriptions/play-rtdn',
    };
  }

  /** A whole push: its Authorization header and its body. */
  push(spec: PushTokenSpec, notification: unknown, opts?: { messageId?: string }): { authorization: string; body: PushBody } {
    return { authorization: `Bearer ${this.pushToken(spec)}`, body: this.pushBody(notification, opts) };
  }

  // ---- HTTP ----

  private kindOf(method: string, segments: string[], verb: string | undefined): RequestKind {
    const path = segments.join('/');
    if (method === 'POST' && path === 'token') return 'token';
    if (method === 'GET' && path === 'oauth2/v3/certs') return 'jwks';
    if (segments[0] !== 'androidpublisher' || segments[1] !== 'v3' || segments[2] !== 'applications') return 'other';
    if (segments.length === 9 && segments[4] === 'purchases' && segments[5] === 'products' && segments[7] === 'tokens') {
      if (method === 'GET' && verb === undefined) return 'purchase';
      if (method === 'POST' && verb === 'consume') return 'consume';
    }
    if (method === 'GET' && segments.length === 6 && segments[4] === 'orders' && verb === undefined) return 'order';
    return 'other';
  }

  /** The raw path split in segments (a final `:verb` set apart), each percent-decoded; undefined for a bad escape. */
  private static route(rawUrl: string): { rawPath: string; segments: string[]; verb: string | undefined } | undefined {
    const rawPath = rawUrl.split('?')[0]!;
    const raw = rawPath.replace(/^\/+/, '').split('/');
    let verb: string | undefined;
    const last = raw[raw.length - 1]!;
    const colon = last.lastIndexOf(':');
    if (colon > 0) {
      verb = last.slice(colon + 1);
      raw[raw.length - 1] = last.slice(0, colon);
    }
    try {
      return { rawPath, segments: raw.map((s) => decodeURIComponent(s)), verb };
    } catch {
      return undefined;
    }
  }

  private applies(kind: RequestKind): boolean {
    return !this.fault.kinds || this.fault.kinds.includes(kind);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const route = GoogleStandIn.route(req.url ?? '/');
    if (!route) return send(res, 400, googleError(400, 'Invalid path escape.', 'INVALID_ARGUMENT'));
    const kind = this.kindOf(req.method ?? 'GET', route.segments, route.verb);
    this.counts[kind]++;
    this.requests.push({ kind, method: req.method ?? 'GET', rawPath: route.rawPath, segments: route.segments });
    if (this.applies(kind)) {
      const { delayMs, hold, status, retryAfter, close } = this.fault;
      if (hold) await new Promise<void>((resolve) => this.held.push(resolve));
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      if (close) return void req.socket.destroy();
      if (status) {
        return send(
          res,
          status,
          googleError(status, 'The service is currently unavailable.', 'UNAVAILABLE'),
          retryAfter ? { 'retry-after': retryAfter } : {},
        );
      }
    }
    if (res.destroyed) return;
    const [status, answer, headers] = this.answer(kind, req, route.segments, body);
    send(res, status, answer, headers);
  }

  private answer(kind: RequestKind, req: IncomingMessage, segments: string[], body: string): [number, Json | undefined, Record<string, string>?] {
    switch (kind) {
      case 'token':
        return this.tokenEndpoint(req, body);
      case 'jwks':
        return [200, { keys: [{ ...this.googleKey.publicKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig', kid: this.googleKey.kid }] }];
      case 'purchase':
      case 'consume':
      case 'order':
        return this.api(kind, req, segments);
      default:
        return [404, googleError(404, 'Not Found', 'NOT_FOUND')];
    }
  }

  /** The OAuth 2.0 token endpoint: the JWT bearer grant of a registered service account. */
  private tokenEndpoint(req: IncomingMessage, body: string): [number, Json] {
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      return [400, { error: 'invalid_request', error_description: 'Invalid content type.' }];
    }
    const form = new URLSearchParams(body);
    const grantType = form.get('grant_type');
    if (grantType !== JWT_BEARER) return [400, { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${grantType ?? ''}` }];
    const refusal = this.assertionRefusal(form.get('assertion') ?? '');
    if (typeof refusal === 'string') return [400, { error: 'invalid_grant', error_description: refusal }];
    if (!refusal.scope) return [400, { error: 'invalid_scope', error_description: 'Invalid oauth scope or ID token audience provided.' }];
    const token = `ya29.${randomBytes(48).toString('base64url')}`;
    this.tokens.set(token, { email: refusal.email, scope: refusal.scope, expiresAt: Date.now() + this.tokenLifetimeSeconds * 1000 });
    return [200, { access_token: token, expires_in: this.tokenLifetimeSeconds, token_type: 'Bearer' }];
  }

  /** Checks an assertion as Google does: its refusal text, or the account and scope it asks for. */
  private assertionRefusal(assertion: string): string | { email: string; scope: string } {
    const jwt = decodeJwt(assertion);
    if (!jwt) return 'Invalid JWT: not a JWT.';
    if (jwt.header.alg !== 'RS256') return 'Invalid JWT Signature.';
    const { iss, aud, iat, exp, scope } = jwt.payload;
    const account = typeof iss === 'string' ? this.accounts.get(iss) : undefined;
    if (!account) return 'Invalid grant: account not found';
    const kid = jwt.header.kid;
    const candidates = typeof kid === 'string' ? [account.keys.get(kid)].filter((k) => k !== undefined) : [...account.keys.values()];
    if (!candidates.some((key) => verify('sha256', Buffer.from(jwt.input), key, jwt.signature))) return 'Invalid JWT Signature.';
    if (aud !== this.tokenUrl) return 'Invalid JWT: Failed audience check.';
    const now = Math.floor(Date.now() / 1000);
    if (typeof iat !== 'number' || typeof exp !== 'number' || exp - iat > 3600 || exp <= now || iat > now + 60) {
      return 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.';
    }
    return { email: iss as string, scope: typeof scope === 'string' ? scope : '' };
  }

  /** products.get, :consume and orders.get, behind the access token and the account's access to the package. */
  private api(kind: 'purchase' | 'consume' | 'order', req: IncomingMessage, segments: string[]): [number, Json | undefined, Record<string, string>?] {
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const issued = bearer ? this.tokens.get(bearer) : undefined;
    if (!issued || issued.expiresAt <= Date.now()) {
      return [
        401,
        googleError(
          401,
          'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
          'UNAUTHENTICATED',
        ),
        { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
      ];
    }
    const packageName = segments[3]!;
    if (!issued.scope.split(' ').includes(ANDROID_PUBLISHER_SCOPE)) {
      return [403, googleError(403, 'Request had insufficient authentication scopes.', 'PERMISSION_DENIED', 'insufficientPermissions')];
    }
    if (!this.accounts.get(issued.email)?.packages.has(packageName)) {
      return [
        403,
        googleError(
          403,
          'The current user has insufficient permissions to perform the requested operation.',
          'PERMISSION_DENIED',
          'permissionDenied',
        ),
      ];
    }
    if (kind === 'order') {
      const purchase = this.orders.get(`${packageName}\n${segments[5]}`);
      return purchase ? [200, orderJson(purchase)] : [404, googleError(404, 'Order not found.', 'NOT_FOUND', 'notFound')];
    }
    const purchase = this.purchases.get(`${packageName}\n${segments[6]}\n${segments[8]}`);
    if (!purchase) return [404, googleError(404, 'The purchase token was not found.', 'NOT_FOUND', 'purchaseTokenNotFound')];
    if (kind === 'purchase') return [200, productPurchaseJson(purchase)];
    if (purchase.state !== 'purchased' || purchase.consumed) {
      return [
        400,
        googleError(400, 'The purchase is not in a valid state to perform the desired operation.', 'INVALID_ARGUMENT', 'invalidPurchaseState'),
      ];
    }
    purchase.consumed = true;
    return [200, undefined];
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 65_536) break;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: Json | undefined, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.headersSent) return;
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(body === undefined ? {} : { 'content-type': 'application/json; charset=UTF-8' }),
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Google's JSON error body ({"error": {code, message, errors: [{reason}], status}}). */
function googleError(code: number, message: string, status: string, reason?: string): Json {
  return {
    error: { code, message, errors: [{ message, domain: reason ? 'androidpublisher' : 'global', reason: reason ?? status.toLowerCase() }], status },
  };
}

const STATE_NUMBER = { purchased: 0, cancelled: 1, pending: 2 } as const;

/** A ProductPurchase resource, as purchases.products.get answers it. */
function productPurchaseJson(p: StandInPurchase): Json {
  const s = p.spec;
  return {
    kind: 'androidpublisher#productPurchase',
    purchaseTimeMillis: String(s.purchaseTimeMillis ?? Date.now() - 60_000),
    purchaseState: STATE_NUMBER[p.state],
    consumptionState: p.consumed ? 1 : 0,
    developerPayload: s.developerPayload ?? '',
    ...(p.orderId ? { orderId: p.orderId } : {}),
    ...(s.purchaseType !== undefined ? { purchaseType: s.purchaseType } : {}),
    acknowledgementState: p.acknowledged ? 1 : 0,
    productId: p.productId,
    ...(s.quantity !== undefined && s.quantity !== 1 ? { quantity: s.quantity } : {}),
    ...(s.obfuscatedExternalAccountId !== undefined ? { obfuscatedExternalAccountId: s.obfuscatedExternalAccountId } : {}),
    ...(s.obfuscatedExternalProfileId !== undefined ? { obfuscatedExternalProfileId: s.obfuscatedExternalProfileId } : {}),
    regionCode: s.regionCode ?? 'US',
  };
}

/** An Order resource, as orders.get answers it. */
function orderJson(p: StandInPurchase): Json {
  const currency = p.spec.currency ?? 'USD';
  const total = money(p.spec.price ?? '4.99', currency);
  const created = new Date(p.spec.purchaseTimeMillis ?? Date.now() - 60_000).toISOString();
  return {
    orderId: p.orderId,
    purchaseToken: p.token,
    state: p.state === 'cancelled' ? 'CANCELED' : p.state === 'pending' ? 'PENDING' : 'PROCESSED',
    createTime: created,
    lastEventTime: created,
    total,
    tax: { currencyCode: currency, units: '0', nanos: 0 },
    lineItems: [
      {
        productId: p.productId,
        productTitle: p.productId,
        total,
        tax: { currencyCode: currency },
        listingPrice: total,
        oneTimePurchaseDetails: { quantity: p.spec.quantity ?? 1 },
      },
    ],
  };
}

/** A DeveloperNotification for a voided one-time purchase (a refund, chargeback or cancellation). */
export function voidedPurchaseNotification(n: { packageName: string; purchaseToken: string; orderId: string; refundType?: 1 | 2 }): Json {
  return {
    version: '1.0',
    packageName: n.packageName,
    eventTimeMillis: String(Date.now()),
    voidedPurchaseNotification: { purchaseToken: n.purchaseToken, orderId: n.orderId, productType: 2, refundType: n.refundType ?? 1 },
  };
}

/** The DeveloperNotification Play Console sends when a studio tests its set-up. */
export function testNotification(packageName: string): Json {
  return { version: '1.0', packageName, eventTimeMillis: String(Date.now()), testNotification: { version: '1.0' } };
}
