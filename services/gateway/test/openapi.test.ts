import { AdminCreateApp, readContentFile } from '@ccs/shared';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { appOfToken } from '../../../test/support/grant-currency.js';
import { publishStoreRefund, storeRefund } from '../../../test/support/store-refund.js';
import { applePki, type ApplePki } from '../../../test/support/store/apple-pki.js';
import { generateServiceAccountKey } from '../../../test/support/store/google-stand-in.js';
import { buildOpenApiDocument, openApiPath } from '../src/openapi/document.js';
import {
  OpenApiDocumentSchema,
  operationsOf,
  pointer,
  refsIn,
  resolvePointer,
  servedRoutes,
  type OpenApiDocument,
} from './support/openapi-document.js';

/** Routes that are not part of the API: probes, metrics, the reference page and the document. */
// The console's HTML pages (docs/console.md) are not part of the API.
const NOT_API = [/^\/healthz$/, /^\/readyz$/, /^\/metrics$/, /^\/docs/, /^\/api\/v1\/openapi\.json$/, /^\/console/];
const DOC_ID = 'https://ccs.invalid/openapi.json';
const ERROR_DOCUMENT = { $ref: '#/components/schemas/ErrorDocument' };
/** The demo app's secret key (the store's admin operations are the demo app's: its players bought). */
const DEMO_SECRET_KEY = `sk_${randomUUID().replace(/-/g, '')}`;

/** A resource as the flow below reads it. */
interface Res {
  id: string;
  attributes: Record<string, unknown>;
}
/** An answer as the flow below reads it: `data` is one resource or a list (each call knows which). */
interface Doc {
  data: Res & Res[];
  meta: Record<string, string>;
}

describe('OpenAPI document and API reference', () => {
  let stack: TestStack;
  let doc: OpenApiDocument;
  let ajv: Ajv2020;
  let pki: ApplePki;
  const exercised = new Set<string>();

  /** The documented path a concrete URL belongs to (literal paths win over `{templates}`). */
  function documentedPath(url: string): string {
    const plain = url.split('?')[0]!;
    if (doc.paths[plain]) return plain;
    const matches = Object.keys(doc.paths).filter((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(plain));
    expect(matches, `one documented path for ${plain}`).toHaveLength(1);
    return matches[0]!;
  }

  /**
   * Asserts that a real answer is documented: its status is listed for the operation, its media
   * type is the documented one, and its body validates against the documented schema.
   */
  function expectDocumented(res: LightMyRequestResponse, method: 'get' | 'post' | 'put' | 'patch' | 'delete', url: string): Doc {
    const path = documentedPath(url);
    const op = doc.paths[path]?.[method];
    if (!op) throw new Error(`${method.toUpperCase()} ${path} is not documented`);
    exercised.add(op.operationId);
    const documented = op.responses[String(res.statusCode)];
    expect(documented, `${op.operationId} documents status ${res.statusCode}: ${res.body.slice(0, 300)}`).toBeDefined();
    expect(res.headers['x-request-id']).toBeTruthy();
    const [mediaType] = Object.keys(documented?.content ?? {});
    if (!mediaType) {
      expect(res.body, `${op.operationId} ${res.statusCode} has no body`).toBe('');
      return res.body as unknown as Doc;
    }
    expect(String(res.headers['content-type']).split(';')[0]).toBe(mediaType);
    if (mediaType === 'text/plain') return res.body as unknown as Doc;
    const validate = ajv.getSchema(DOC_ID + pointer('paths', path, method, 'responses', String(res.statusCode), 'content', mediaType, 'schema'))!;
    const ok = validate(res.json());
    expect(ok ? [] : validate.errors, `${op.operationId} ${res.statusCode} body: ${res.body.slice(0, 600)}`).toEqual([]);
    return res.json() as Doc;
  }

  beforeAll(async () => {
    // The store trusts the test certificate authority, which signs the App Store transactions below.
    pki = await applePki();
    stack = await startStack({ env: { STORE_APPLE_ROOT_CERTS: pki.rootPem, CHESTS_DEMO_SECRET_KEY: DEMO_SECRET_KEY } });
    const res = await stack.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode, res.body).toBe(200);
    doc = OpenApiDocumentSchema.parse(res.json());
    ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    // Responses are validated against the document itself, so every $ref resolves as in a client.
    ajv.addSchema({ ...(res.json() as object), $id: DOC_ID }, undefined, undefined, false);
  });
  afterAll(async () => stack?.close());

  it('serves the document as OpenAPI 3.1 JSON without an apikey', async () => {
    const res = await stack.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.headers['content-type']).toContain('application/json');
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(buildOpenApiDocument([], { publicBaseUrl: 'https://api.example.com/' }).servers).toEqual([{ url: 'https://api.example.com' }]);
    expectDocumented(res, 'get', '/api/v1/openapi.json');
    // The API's version is the gateway package's, not a number of its own.
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect((res.json() as { info: { version: string } }).info.version).toBe(pkg.version);
  });

  it('documents every route the gateway serves, and only those', () => {
    const served = servedRoutes(stack.app.printRoutes({ commonPrefix: false }));
    // The parser must really see the route tree (else this test would pass on nothing).
    expect(served).toContainEqual({ method: 'POST', url: '/api/v1/chests/:id/open' });
    expect(served).toContainEqual({ method: 'DELETE', url: '/api/v1/players/me/friends/:id' });
    expect(served.length).toBeGreaterThan(40);

    const api = served.filter((r) => !NOT_API.some((re) => re.test(r.url)));
    const isDocumented = (r: { method: string; url: string }) => Boolean(doc.paths[openApiPath(r.url)]?.[r.method.toLowerCase() as 'get']);
    const missing = api.filter((r) => r.method !== 'HEAD' && !isDocumented(r)).map((r) => `${r.method} ${r.url}`);
    expect(missing, 'routes without documentation').toEqual([]);
    // HEAD is Fastify's automatic mirror of GET, which the document covers.
    for (const r of api.filter((x) => x.method === 'HEAD')) expect(api).toContainEqual({ method: 'GET', url: r.url });

    const operations = operationsOf(doc);
    expect(operations.length).toBeGreaterThanOrEqual(31);
    for (const { path, method } of operations) {
      const url = path.replace(/\{([^}]+)\}/g, ':$1');
      expect(stack.app.hasRoute({ method: method.toUpperCase() as 'GET', url }), `${method} ${path} exists`).toBe(true);
    }
  });

  it('is well formed: unique operations, declared tags, schemes and path parameters, resolvable $refs', () => {
    const tags = new Set(doc.tags.map((t) => t.name));
    const schemes = new Set(Object.keys(doc.components.securitySchemes));
    expect(doc.components.securitySchemes).toMatchObject({
      apikey: { type: 'apiKey', in: 'header', name: 'apikey' },
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    });
    const ids = new Set<string>();
    for (const { path, method, op } of operationsOf(doc)) {
      const where = `${method} ${path}`;
      expect(ids.has(op.operationId), `${where}: operationId ${op.operationId} is unique`).toBe(false);
      ids.add(op.operationId);
      expect(
        op.tags.every((t) => tags.has(t)),
        `${where}: tags declared`,
      ).toBe(true);
      for (const requirement of op.security) for (const s of Object.keys(requirement)) expect(schemes.has(s), where).toBe(true);
      for (const name of [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1])) {
        expect(
          op.parameters.find((p) => p.in === 'path' && p.name === name && p.required === true),
          `${where}: path parameter ${name}`,
        ).toBeDefined();
      }
      const statuses = Object.keys(op.responses);
      // Every operation may fail, and answers its errors with the JSON:API error document.
      expect(
        statuses.some((s) => s.startsWith('5')),
        `${where}: documents a 5xx`,
      ).toBe(true);
      for (const status of statuses.filter((s) => Number(s) >= 400 && op.operationId !== 'readiness')) {
        expect(op.responses[status]!.content?.['application/vnd.api+json']?.schema, `${where} ${status}`).toEqual(ERROR_DOCUMENT);
      }
    }
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(30);
    for (const ref of refs) {
      expect(ref.startsWith('#/'), ref).toBe(true);
      expect(resolvePointer(doc, ref), `${ref} resolves`).toBeDefined();
    }
    // Every component is valid JSON Schema 2020-12 (against the meta-schema) and compiles.
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      expect(ajv.validateSchema(schema) ? [] : ajv.errors, name).toEqual([]);
      expect(ajv.getSchema(DOC_ID + pointer('components', 'schemas', name)), name).toBeTruthy();
    }
  });

  it('describes security per operation, and the request side as the routes validate it', () => {
    const op = (path: string, method: 'get' | 'post') => doc.paths[path]![method]!;
    const player = [{ apikey: [], bearerAuth: [] }];
    expect([op('/api/v1/openapi.json', 'get').security, op('/healthz', 'get').security]).toEqual([[], []]);
    expect([op('/api/v1/players/login', 'post').security, op('/players/login', 'post').security]).toEqual([[{ apikey: [] }], [{ apikey: [] }]]);
    expect(op('/api/v1/chests', 'get').security).toEqual([...player, { apikey: [] }]);
    expect([op('/api/v1/chests/{id}/open', 'get').security, op('/currencies/{currency_id}/credit', 'post').security]).toEqual([player, player]);
    // Media types, query members and bodies come from the routes' own config and validation.
    expect(Object.keys(op('/api/v1/currencies/{currency_id}/credit', 'post').requestBody!.content)).toEqual(['application/json']);
    expect(Object.keys(op('/api/v1/chests/{id}/purchase', 'post').requestBody!.content)).toEqual(['application/vnd.api+json']);
    const catalog = op('/api/v1/chests', 'get').parameters;
    expect(catalog.map((p) => p.name).sort()).toEqual(['fields', 'filter', 'page', 'sort']);
    expect(resolvePointer(catalog.find((p) => p.name === 'page')!.schema, '#/properties/limit')).toMatchObject({ maximum: 100, default: 20 });
    expect(op('/api/v1/collections/{id}', 'get').parameters.map((p) => p.name)).toEqual(['id', 'include', 'fields']);
    expect(op('/api/v1/chests/{id}/odds', 'get').parameters.map((p) => p.name)).toEqual(['id', 'rules_version']);
    expect(op('/api/v1/chests/{id}/open', 'get').responses['403']!.description).toContain('chest_already_opened');
    expect(op('/api/v1/players/register', 'post').responses['429']!.headers!['retry-after']).toBeDefined();
  });

  it('has request examples that its own request schemas accept', () => {
    const examples = operationsOf(doc).flatMap(({ op }) =>
      Object.values(op.requestBody?.content ?? {})
        .filter((m) => m.example !== undefined)
        .map((m) => ({ id: op.operationId, ...m })),
    );
    expect(examples.length).toBeGreaterThanOrEqual(8);
    for (const { id, schema, example } of examples) {
      const validate = ajv.compile(schema);
      expect(validate(example) ? [] : validate.errors, id).toEqual([]);
    }
  });

  it('serves a browsable reference at /docs from local files', async () => {
    const page = await stack.inject({ method: 'GET', url: '/docs' });
    expect([page.statusCode, page.headers['content-type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect(page.body).toContain('swagger-ui-bundle.js');
    // Offline: every script and stylesheet is served by the gateway itself.
    expect(page.body).not.toMatch(/(src|href)="https?:/);
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css', 'swagger-initializer.js']) {
      const res = await stack.inject({ method: 'GET', url: `/docs/static/${asset}` });
      expect([res.statusCode, res.body.length > 100], asset).toEqual([200, true]);
    }
    expect((await stack.inject({ method: 'GET', url: '/docs/json' })).json()).toEqual(doc);
  });

  it('documents the answers of sparse fieldsets: real answers with fields[...] validate against the document', { timeout: 180_000 }, async () => {
    /** A GET with `fields[...]` (brackets as a client sends them), checked against the document. */
    const get = async (url: string, token?: string) => {
      const res = await stack.inject({ method: 'GET', url, headers: jsonApiHeaders(stack.apiKey, token) });
      expect(res.statusCode, res.body).toBe(200);
      return expectDocumented(res, 'get', url);
    };
    /** The member names of every resource of a list or a single document. */
    const keysOf = (doc: Doc, member: 'attributes' | 'relationships') =>
      [doc.data].flat().map((r) => Object.keys((r as unknown as Record<string, Record<string, unknown>>)[member] ?? {}));
    const password = 'Str0ng!pass';
    const registered = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/register?fields[player]=email',
      headers: jsonApiHeaders(stack.apiKey),
      payload: JSON.stringify({
        data: { type: 'player', attributes: { email: 'sparse@example.com', password, password_confirmation: password }, relationships: {} },
      }),
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const player = expectDocumented(registered, 'post', '/api/v1/players/register');
    expect(keysOf(player, 'attributes')).toEqual([['email']]);
    expect(keysOf(player, 'relationships')).toEqual([[]]);
    const token = player.meta.access_token;

    const catalog = await get('/api/v1/chests?fields[chest]=name', token);
    expect(catalog.data.length).toBeGreaterThan(0);
    expect(new Set(keysOf(catalog, 'attributes').flat())).toEqual(new Set(['name']));
    const chest = await get(`/api/v1/chests/${catalog.data[0]!.id}?fields[chest]=id`);
    expect(keysOf(chest, 'attributes')).toEqual([[]]);
    const inventory = await get('/api/v1/players/me/chests?fields[chest]=images', token);
    expect(keysOf(inventory, 'attributes')).toEqual([['images']]);
    expect(keysOf(await get('/api/v1/players/me?fields[player]=experience,chests', token), 'attributes')).toEqual([['experience']]);
    expect(keysOf(await get('/api/v1/currencies?fields[currency]=balance', token), 'attributes').flat()).not.toContain('code');
    const collections = await get('/api/v1/collections?fields[collection]=collectibles');
    expect(keysOf(collections, 'attributes').flat()).toEqual([]);
    const collectionId = collections.data[0]!.id;
    await get(`/api/v1/collections/${collectionId}?include=collectibles&fields[collection]=name&fields[collectible]=images,collection_id`);
    await get(`/api/v1/collections/${collectionId}/collectibles?include=collection&fields[collectible]=name&fields[collection]=description`);
    const collectibles = await get('/api/v1/collectibles?fields[collectible]=name');
    expect(keysOf(collectibles, 'relationships').flat()).toEqual([]);
    await get(`/api/v1/collectibles/${collectibles.data[0]!.id}?fields[collectible]=collection`);
    await get('/api/v1/players/me/collection?include=collection&fields[collectible]=images&fields[collection]=name', token);

    // The document says why: the attributes of a resource that takes `fields[chest]` are listed, none required.
    const attributes = resolvePointer(doc, pointer('components', 'schemas', 'CatalogChest', 'properties', 'attributes')) as Record<string, unknown>;
    expect(Object.keys(attributes.properties as object)).toEqual(['name', 'description', 'images']);
    expect(attributes.required).toBeUndefined();
    expect(String(attributes.description)).toContain('fields[chest]');
  });

  it('answers every documented operation as documented, on real requests', { timeout: 180_000 }, async () => {
    type Opts = { token?: string; body?: unknown; headers?: Record<string, string>; noKey?: boolean };
    /** Sends a request and checks its answer against the document. */
    const go = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, o: Opts = {}) => {
      const headers = { ...(o.noKey ? {} : jsonApiHeaders(stack.apiKey, o.token)), ...o.headers };
      const res = await stack.inject({ method, url, headers, ...(o.body === undefined ? {} : { payload: JSON.stringify(o.body) }) });
      return expectDocumented(res, method.toLowerCase() as 'get', url);
    };
    const password = 'Str0ng!pass';
    const register = (email: string) =>
      go('POST', '/api/v1/players/register', {
        body: { data: { type: 'player', attributes: { email, password, password_confirmation: password }, relationships: {} } },
      });
    const login = { data: { type: 'player', attributes: { email: 'ada@example.com', password } } };

    // Players and sessions: successes and the failures particular to them.
    const ada = await register('ada@example.com');
    await register('ada@example.com'); // 409
    await register('not-an-email'); // 422
    await go('POST', '/api/v1/players/login', { body: login });
    await go('POST', '/players/login', { body: { data: { type: 'player', attributes: { email: 'ada@example.com', password: 'Wr0ng!pass' } } } }); // 401
    const refreshed = await go('POST', '/api/v1/players/refresh', {
      body: { data: { type: 'session', attributes: { refresh_token: ada.meta.refresh_token } } },
    });
    const token = refreshed.meta.access_token;
    expect((await go('POST', '/api/v1/players/anonymous')).data.attributes.email).toBeNull();
    await go('GET', '/api/v1/players/me?include=chests', { token });
    await go('PATCH', '/api/v1/players/me', { token, body: { data: { type: 'player', attributes: { privacy: 'public' } } } });
    await go('PATCH', '/api/v1/players/me', { token, body: { data: { type: 'player', attributes: { birth_year: 1990 } } } });
    await go('PATCH', '/api/v1/players/me', { token, body: { data: { type: 'player', attributes: { birth_year: 1991 } } } }); // 409

    // Friends.
    const bob = await register('bob@example.com');
    const befriend = (id: string) => go('POST', '/api/v1/players/me/friends', { token, body: { data: { type: 'player', id } } });
    await befriend(bob.data.id); // 201
    await befriend(bob.data.id); // 200
    await befriend(ada.data.id); // 422
    await go('GET', '/api/v1/players/me/friends', { token });
    await go('DELETE', `/api/v1/players/me/friends/${bob.data.id}`, { token });

    // The player's canonical URL (its links.self): the caller's own id answers as `me`, another's is a 404.
    await go('GET', `/api/v1/players/${ada.data.id}`, { token });
    await go('GET', `/api/v1/players/${bob.data.id}`, { token }); // 404
    await go('GET', '/api/v1/players/not-a-uuid', { token }); // 400
    await go('PATCH', `/api/v1/players/${ada.data.id}`, {
      token,
      body: { data: { type: 'player', id: ada.data.id, attributes: { privacy: 'friends' } } },
    });
    await go('PATCH', `/api/v1/players/${bob.data.id}`, {
      token,
      body: { data: { type: 'player', id: bob.data.id, attributes: { privacy: 'public' } } },
    }); // 404

    // Currencies and credit (plain JSON).
    const currencies = await go('GET', '/api/v1/currencies', { token });
    await go('GET', '/currencies');
    const coins = currencies.data.find((c) => c.attributes.code === 'coins')!.id;
    const credit = (url: string, amount: unknown) =>
      go('POST', url, { token, body: { amount }, headers: { 'content-type': 'application/json', 'idempotency-key': `k-${String(amount)}` } });
    await credit(`/api/v1/currencies/${coins}/credit`, '25.50');
    await credit(`/currencies/${coins}/credit`, '25.50'); // replayed
    await credit(`/currencies/${coins}/credit`, 10); // 422
    const gems = currencies.data.find((c) => c.attributes.code === 'gems')!.id;
    await credit(`/api/v1/currencies/${gems}/credit`, '1'); // 403 paid_currency

    // Catalog, inventory, opening, purchase.
    const catalog = await go('GET', '/api/v1/chests?filter[name]=Wooden%20Chest&sort=-name&page[limit]=2', { token });
    const chestType = catalog.data[0]!.id;
    await go('GET', '/api/v1/chests?sort=color'); // 400
    await go('GET', `/api/v1/chests/${chestType}`);
    await go('GET', '/api/v1/chests/not-a-uuid'); // 400
    await go('GET', `/api/v1/chests/${chestType}/odds`);
    await go('GET', `/api/v1/players/${bob.data.id}/chests`, { token }); // counts only
    const starter = (await go('GET', '/api/v1/players/me/chests', { token })).data[0]!.id;
    await go('GET', `/api/v1/chests/${starter}/open`, { token });
    await go('GET', `/api/v1/chests/${starter}/open`, { token }); // 403
    const bought = await go('POST', `/api/v1/chests/${chestType}/purchase`, {
      token,
      body: { data: { type: 'purchase', attributes: { currency: 'coins' } } },
    });
    await go('POST', `/api/v1/chests/${bought.data[0]!.id}/open`, { token });
    const golden = (await go('GET', '/api/v1/chests?filter[name]=Golden%20Chest', { token })).data[0]!.id;
    await go('POST', `/api/v1/chests/${golden}/purchase`, { token, body: { data: { type: 'purchase', attributes: { currency: 'gems' } } } }); // 403: no country declared
    await go('GET', '/api/v1/players/me/openings', { token });

    // Batch open.
    const two = await go('POST', `/api/v1/chests/${chestType}/purchase`, {
      token,
      body: { data: { type: 'purchase', attributes: { currency: 'coins', quantity: 2 } } },
    });
    await go('POST', '/api/v1/chests/open', { token, body: { data: two.data.map((c) => ({ type: 'chest', id: c.id })) } });
    await go('POST', '/api/v1/chests/open', { token, body: { data: [] } }); // 422

    // Time-locked chests: start the timer, skip it, refusals.
    const hourglass = (await go('GET', '/api/v1/chests?filter[name]=Hourglass%20Chest', { token })).data[0]!.id;
    await credit(`/api/v1/currencies/${coins}/credit`, '2000');
    const timed = await go('POST', `/api/v1/chests/${hourglass}/purchase`, {
      token,
      body: { data: { type: 'purchase', attributes: { currency: 'coins', quantity: 2 } } },
    });
    const [timedA, timedB] = timed.data.map((c) => c.id);
    await go('POST', `/api/v1/chests/${timedA}/unlock`, { token });
    await go('POST', `/api/v1/chests/${timedB}/unlock`, { token }); // 409 unlock_slot_busy
    await go('GET', `/api/v1/chests/${timedB}/open`, { token }); // 403 chest_locked
    await go('POST', `/api/v1/chests/${timedB}/unlock`, { token, body: { data: { type: 'unlock', attributes: { skip_with: 'coins' } } } }); // 422
    await go('POST', `/api/v1/chests/${timedB}/unlock`, { token, body: { data: { type: 'unlock', attributes: { skip_with: 'gems' } } } }); // 409 insufficient_funds
    await go('GET', '/api/v1/players/me/chests', { token }); // meta.lock

    // Overflow mailbox (empty here: the inventory has room).
    await go('GET', '/api/v1/players/me/mailbox', { token });
    await go('POST', `/api/v1/players/me/mailbox/${randomUUID()}/claim`, { token }); // 404

    // Trading (the demo content does not enable it).
    await go('POST', '/api/v1/players/me/collection/ancient-clay-amulet/dissolve', {
      token,
      body: { data: { type: 'dissolve', attributes: { quantity: 1 } } },
    }); // 403 trading_disabled
    const trade = (action: string) => go('POST', `/api/v1/trades/${randomUUID()}/${action}`, { token }); // 404
    await go('POST', '/api/v1/trades', {
      token,
      body: {
        data: { type: 'trade', attributes: { give: 'a', want: 'b' }, relationships: { partner: { data: { type: 'player', id: bob.data.id } } } },
      },
    }); // 403 trading_disabled
    await trade('accept');
    await trade('decline');
    await trade('cancel');
    await go('GET', `/api/v1/trades/${randomUUID()}`, { token }); // 404
    await go('GET', '/api/v1/trades?filter[role]=incoming&page[limit]=5', { token });
    await go('GET', '/api/v1/players/me/trades', { token });

    // Fairness and pity.
    await go('GET', `/api/v1/chests/${chestType}/odds?rules_version=1`, { token });
    await go('GET', `/api/v1/chests/${chestType}/odds?rules_version=99`); // 404
    await go('GET', `/api/v1/chests/${chestType}/odds/observed`);
    await go('GET', '/api/v1/odds-log?page[limit]=5');
    await go('GET', `/api/v1/chests/${chestType}/odds/observed?rules_version=99`); // 404
    await go('GET', '/api/v1/players/me/fairness', { token });
    await go('GET', '/api/v1/players/me/pity', { token });
    await go('GET', '/api/v1/players/me/limits', { token }); // the demo content sets no spend limit: an empty list
    const opened = (await go('GET', '/api/v1/players/me/openings', { token })).data[0]!.id;
    await go('GET', `/api/v1/openings/${opened}/verification`, { token }); // 409
    await go('POST', '/api/v1/players/me/fairness/rotate', { token });
    await go('PATCH', '/api/v1/players/me/fairness', { token, body: { data: { type: 'fairness', attributes: { client_seed: 'lucky-7' } } } });
    await go('PATCH', '/api/v1/players/me/fairness', { token, body: { data: { type: 'fairness', attributes: { client_seed: 'not ok!' } } } }); // 422
    await go('GET', `/api/v1/openings/${opened}/verification`, { token });
    await go('GET', `/api/v1/openings/${randomUUID()}/verification`, { token }); // 404

    // Gacha banners: the demo's kraken-rising, anonymous and as the player.
    await go('GET', '/api/v1/banners');
    await go('GET', '/api/v1/banners', { token });
    await go('GET', '/api/v1/banners/kraken-rising', { token });
    await go('GET', '/api/v1/banners/no-such-banner'); // 404
    await go('GET', '/api/v1/banners/kraken-rising/odds');
    await go('GET', '/api/v1/banners/kraken-rising/odds', { token });
    await go('GET', '/api/v1/banners/Not_A_Slug/odds'); // 404
    await credit(`/api/v1/currencies/${coins}/credit`, '1000');
    const pull = { data: { type: 'pull', attributes: { count: 1, currency: 'coins' } } };
    await go('POST', '/api/v1/banners/kraken-rising/pull', { token, body: pull });
    const tenPull = { data: { type: 'pull', attributes: { count: 10, currency: 'coins' } } };
    await go('POST', '/api/v1/banners/kraken-rising/pull', { token, body: tenPull }); // 409 insufficient_funds (10,000 coins)
    await go('POST', '/api/v1/banners/no-such-banner/pull', { token, body: pull }); // 404
    await go('POST', '/api/v1/banners/kraken-rising/spark', {
      token,
      body: { data: { type: 'spark', attributes: { collectible_id: 'sea-kraken' } } },
    }); // 409
    await go('POST', '/api/v1/banners/kraken-rising/spark', { token, body: { data: { type: 'spark', attributes: { collectible_id: 'x' } } } }); // 422

    // A debt: a store refund took back more coins than bob holds; spends are refused until credits cover it.
    const bobToken = (bob.meta as unknown as { access_token: string }).access_token;
    expect(await publishStoreRefund(stack, storeRefund(appOfToken(bobToken), bob.data.id, { coins: '1600' }))).toMatchObject({ applied: true });
    const owed = (await go('GET', '/api/v1/currencies', { token: bobToken })).data as unknown as { attributes: { code: string }; meta?: unknown }[];
    expect(owed.find((c) => c.attributes.code === 'coins')!.meta).toEqual({ debt: '100.00' });
    await go('POST', `/api/v1/chests/${chestType}/purchase`, {
      token: bobToken,
      body: { data: { type: 'purchase', attributes: { currency: 'coins' } } },
    }); // 403 currency_in_debt
    await go('POST', `/api/v1/currencies/${coins}/credit`, {
      token: bobToken,
      body: { amount: '40' },
      headers: { 'content-type': 'application/json' },
    }); // -60.00

    // Collections and collectibles, anonymous and as the player.
    const collectionId = (await go('GET', '/api/v1/collections?page[limit]=2')).data[0]!.id;
    await go('GET', `/api/v1/collections/${collectionId}?include=collectibles`, { token });
    await go('GET', '/api/v1/collections/no-such-collection'); // 404
    await go('GET', `/api/v1/collections/${collectionId}/collectibles?include=collection`, { token });
    const collectibleId = (await go('GET', `/api/v1/collectibles?filter[collection_id]=${collectionId}&sort=rarity`)).data[0]!.id;
    await go('GET', `/api/v1/collectibles/${collectibleId}?include=collection`, { token });
    await go('GET', `/api/v1/collectibles/${collectibleId}`);
    // Grants land asynchronously when collections is slow: wait for owned items to validate.
    await eventually(async () =>
      expect((await go('GET', '/api/v1/players/me/collection?include=collection', { token })).data.length).toBeGreaterThan(0),
    );

    // Store purchases: an App Store transaction signed by the test authority the stack trusts, its
    // refusals, and its refund by an App Store Server Notification.
    const storePurchase = (attributes: Record<string, unknown>, as = token) =>
      go('POST', '/api/v1/players/me/store/purchases', { token: as, body: { data: { type: 'store_purchase', attributes } } });
    const signed = await pki.signTransaction({ productId: 'com.example.chests.gems_500', appAccountToken: ada.data.id });
    await storePurchase({ platform: 'apple', signed_transaction: signed }); // 201
    await storePurchase({ platform: 'apple', signed_transaction: signed }); // 200 replayed
    await storePurchase({ platform: 'apple', signed_transaction: await pki.signTransaction() }, bobToken); // 201 (no appAccountToken)
    await storePurchase({ platform: 'apple', signed_transaction: signed }, bobToken); // 422 receipt_wrong_player
    await storePurchase({ platform: 'apple', signed_transaction: 'not.a.jws' }); // 422 receipt_invalid
    await storePurchase({ platform: 'google', product_id: 'gems_500', purchase_token: 'opaque' }); // 409 store_not_configured: no Google key
    await storePurchase({ platform: 'amazon', receipt: 'x' }); // 422 invalid_field
    const demoAppId = appOfToken(token);
    const notifyApple = (signedPayload: unknown, appId = demoAppId) =>
      go('POST', `/api/v1/stores/apple/notifications/${appId}`, {
        noKey: true,
        headers: { 'content-type': 'application/json' },
        body: { signedPayload },
      });
    await notifyApple(await pki.signNotification({ notificationType: 'REFUND', signedTransactionInfo: signed })); // 200 applied
    await notifyApple('not.a.jws'); // 401
    await notifyApple(await pki.signNotification({ notificationType: 'TEST' }), randomUUID()); // 404
    await notifyApple('not.a.jws', 'not-a-uuid'); // 400
    await notifyApple(42); // 422
    await go('POST', `/api/v1/stores/google/notifications/${demoAppId}`, {
      noKey: true,
      headers: { 'content-type': 'application/json' },
      body: { message: { data: 'e30=', messageId: '1' }, subscription: 'projects/p/subscriptions/s' },
    }); // 401: no OIDC token
    const demoStudio = { noKey: true, headers: { apikey: DEMO_SECRET_KEY, accept: 'application/vnd.api+json' } };
    const asJson = { ...demoStudio, headers: { ...demoStudio.headers, 'content-type': 'application/json' } };
    await go('PUT', '/api/v1/admin/store/google-credentials', { ...asJson, body: await generateServiceAccountKey() }); // 204
    await go('PUT', '/api/v1/admin/store/google-credentials', { ...asJson, body: { type: 'service_account' } }); // 422
    await go('GET', '/api/v1/admin/store/products', demoStudio);
    await go('GET', `/api/v1/admin/players/${ada.data.id}/store`, demoStudio);
    await go('GET', `/api/v1/admin/players/${randomUUID()}/store`, demoStudio); // 404
    await go('GET', '/api/v1/admin/players/not-a-uuid/store', demoStudio); // 400

    // The admin API, with another app's secret key (a new app: its players are not these).
    const studio = await stack.bus.request(AdminCreateApp, { name: 'Studio tools' }, { requestId: 'openapi-studio' });
    const asStudio = { noKey: true, headers: { apikey: studio.secretKey, accept: 'application/vnd.api+json' } };
    await go('GET', '/api/v1/admin/overview', asStudio);
    await go('GET', `/api/v1/admin/players/${randomUUID()}`, asStudio); // 404
    // The studio corrects a player's declared profile.
    const declared = await go('POST', '/api/v1/players/anonymous', {
      noKey: true,
      headers: { apikey: studio.publishableKey, accept: 'application/vnd.api+json' },
    });
    const asStudioJsonApi = { ...asStudio, headers: { ...asStudio.headers, 'content-type': 'application/vnd.api+json' } };
    const correct = (playerId: string, attributes: Record<string, unknown>) =>
      go('PATCH', `/api/v1/admin/players/${playerId}`, { ...asStudioJsonApi, body: { data: { type: 'player', attributes } } });
    await correct(declared.data.id, { country: 'de', birth_year: 1990 }); // 200
    await correct(declared.data.id, { country: 'QQ' }); // 422
    await correct(randomUUID(), { country: 'DE' }); // 404
    await correct('not-a-uuid', { country: 'DE' }); // 400
    await go('GET', '/api/v1/admin/audit?page[limit]=5', asStudio);
    const simulation = { data: { type: 'simulation', attributes: { opens: 500, seed: 'ab' } } };
    await go('POST', '/api/v1/admin/chests/silver-chest/simulation', {
      ...asStudio,
      headers: { ...asStudio.headers, 'content-type': 'application/vnd.api+json' },
      body: simulation,
    });
    await go('POST', '/api/v1/admin/chests/nope/simulation', {
      ...asStudio,
      headers: { ...asStudio.headers, 'content-type': 'application/vnd.api+json' },
      body: simulation,
    }); // 404
    await go('GET', '/api/v1/admin/chests/silver-chest/drops', asStudio);
    await go('GET', '/api/v1/admin/chests/nope/drops', asStudio); // 404
    await go('GET', '/api/v1/admin/banners/kraken-rising/stats', asStudio);
    await go('GET', '/api/v1/admin/banners/no-such-banner/stats', asStudio); // 404
    await go('GET', '/api/v1/admin/banners/Not_A_Slug/stats', asStudio); // 404 too
    await go('GET', '/api/v1/admin/content', asStudio);
    await go('GET', '/api/v1/admin/content/1/diff', asStudio);
    await go('GET', '/api/v1/admin/content/9/diff', asStudio); // 404
    await go('GET', '/api/v1/admin/content/x/diff', asStudio); // 404 too
    const jsonStudio = { noKey: true, headers: { ...asStudio.headers, 'content-type': 'application/json' } };
    await go('POST', '/api/v1/admin/content', { ...jsonStudio, body: readContentFile() }); // 201
    await go('POST', '/api/v1/admin/content', { ...jsonStudio, body: { currencies: [] } }); // 422
    // Webhook endpoints and their deliveries.
    const jsonApiStudio = { ...asStudio, headers: { ...asStudio.headers, 'content-type': 'application/vnd.api+json' } };
    const hook = await go('POST', '/api/v1/admin/webhooks', {
      ...jsonApiStudio,
      body: { data: { type: 'webhook_endpoint', attributes: { url: 'https://hooks.example.com/ccs', events: ['chest.opened'] } } },
    });
    await go('POST', '/api/v1/admin/webhooks', { ...jsonApiStudio, body: { data: { type: 'webhook_endpoint', attributes: { url: 'ftp://x' } } } }); // 422
    await go('GET', '/api/v1/admin/webhooks', asStudio);
    await go('PATCH', `/api/v1/admin/webhooks/${hook.data.id}`, {
      ...jsonApiStudio,
      body: { data: { type: 'webhook_endpoint', attributes: { enabled: false } } },
    });
    await go('GET', `/api/v1/admin/webhooks/${hook.data.id}/deliveries?filter[status]=parked`, asStudio);
    await go('GET', `/api/v1/admin/webhooks/${randomUUID()}/deliveries`, asStudio); // 404
    await go('POST', `/api/v1/admin/webhooks/${hook.data.id}/deliveries/${randomUUID()}/retry`, asStudio); // 404
    await go('DELETE', `/api/v1/admin/webhooks/${hook.data.id}`, asStudio); // 204
    // The studio's grant of currency to one of its players, once per reference.
    const grantee = await go('POST', '/api/v1/players/anonymous', {
      noKey: true,
      headers: { apikey: studio.publishableKey, accept: 'application/vnd.api+json' },
    });
    const grant = (playerId: string, attributes: Record<string, unknown>) =>
      go('POST', `/api/v1/admin/players/${playerId}/credits`, { ...jsonApiStudio, body: { data: { type: 'credit', attributes } } });
    const receipt = { currency: 'gems', amount: '100', reference: 'receipt-1' };
    await grant(grantee.data.id, receipt); // 201
    await grant(grantee.data.id, receipt); // 200 replayed
    await grant(grantee.data.id, { ...receipt, amount: '5' }); // 409
    await grant(grantee.data.id, { ...receipt, amount: '0' }); // 422
    await grant(randomUUID(), receipt); // 404
    await grant('not-a-uuid', receipt); // 400
    // The support desk: find players, grant chests, end sessions, lock and unlock, each with a note.
    await go('GET', '/api/v1/admin/players?page[limit]=2', asStudio);
    const search = (prefix: unknown) =>
      go('POST', '/api/v1/admin/players/search', {
        ...jsonApiStudio,
        body: { data: { type: 'player_search', attributes: { email_prefix: prefix } } },
      });
    await search('ada'); // 200, none in this app
    await search(''); // 422
    const note = { meta: { note: 'Ticket 7' } };
    const chests = (playerId: string, attributes: Record<string, unknown>) =>
      go('POST', `/api/v1/admin/players/${playerId}/chests`, { ...jsonApiStudio, body: { data: { type: 'chest_grant', attributes }, ...note } });
    const chestGrant = { chest_type: 'silver-chest', quantity: 2, reference: 'incident-7' };
    await chests(grantee.data.id, chestGrant); // 201
    await chests(grantee.data.id, chestGrant); // 200 replayed
    await chests(grantee.data.id, { ...chestGrant, quantity: 1 }); // 409
    await chests(grantee.data.id, { ...chestGrant, chest_type: 'no-such-chest' }); // 422
    await chests(randomUUID(), chestGrant); // 404
    await chests('not-a-uuid', chestGrant); // 400
    for (const action of ['sessions/revoke', 'lock', 'unlock']) {
      await go('POST', `/api/v1/admin/players/${grantee.data.id}/${action}`, { ...jsonApiStudio, body: note }); // 200
      await go('POST', `/api/v1/admin/players/${grantee.data.id}/${action}`, asStudio); // 200, no body
      await go('POST', `/api/v1/admin/players/${grantee.data.id}/${action}`, { ...jsonApiStudio, body: { meta: { note: '' } } }); // 422
      await go('POST', `/api/v1/admin/players/${randomUUID()}/${action}`, asStudio); // 404
      await go('POST', `/api/v1/admin/players/not-a-uuid/${action}`, asStudio); // 400
    }
    // A player's trades and support's cancel (the demo content does not enable trading: none to cancel).
    await go('GET', `/api/v1/admin/players/${grantee.data.id}/trades?page[limit]=5`, asStudio); // 200, empty
    await go('GET', `/api/v1/admin/players/${randomUUID()}/trades`, asStudio); // 404
    await go('POST', `/api/v1/admin/trades/${randomUUID()}/cancel`, { ...jsonApiStudio, body: note }); // 404
    await go('POST', `/api/v1/admin/trades/${randomUUID()}/cancel`, { ...jsonApiStudio, body: { meta: { note: '' } } }); // 422
    await go('POST', '/api/v1/admin/trades/not-a-uuid/cancel', asStudio); // 400
    // A locked player's token: 403 player_locked, and no login.
    await go('POST', `/api/v1/admin/players/${ada.data.id}/lock`, demoStudio);
    await go('GET', '/api/v1/players/me', { token });
    await go('POST', '/api/v1/players/login', { body: login }); // 403
    await go('POST', `/api/v1/admin/players/${ada.data.id}/unlock`, demoStudio);
    await go('GET', '/api/v1/admin/overview'); // 403: a publishable key
    await go('GET', '/api/v1/admin/audit', { ...asStudio, headers: { ...asStudio.headers, authorization: `Bearer ${token}` } }); // 401

    // Failures every route shares; the gateway's own routes.
    await go('GET', '/api/v1/collectibles', { noKey: true }); // 401
    await go('POST', '/api/v1/players/login', { body: login, headers: { 'content-type': 'text/plain' } }); // 415
    await go('GET', '/api/v1/chests', { headers: { accept: 'application/vnd.api+json; ext=x' } }); // 406
    await go('POST', '/api/v1/players/logout', { token });
    for (const url of ['/healthz', '/readyz', '/api/v1/openapi.json', ...(doc.paths['/metrics'] ? ['/metrics'] : [])])
      await go('GET', url, { noKey: true });

    const never = operationsOf(doc)
      .filter(({ op }) => !exercised.has(op.operationId))
      .map(({ op }) => op.operationId);
    expect(never, 'operations never exercised against the real stack').toEqual([]);
  });
});
