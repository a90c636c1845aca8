import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { registerThroughGateway, TEST_PASSWORD, type RegisteredPlayer } from '../../../test/support/register.js';
import { expectError, expectJsonApi } from '../../../test/support/jsonapi-schema.js';

/** The base the stack is told to write its links on (PUBLIC_BASE_URL), as a deployment behind a proxy is. */
const PUBLIC_BASE = 'https://api.ccs.invalid';
/** The demo app's secret key, for the admin API's resources. */
const SECRET_KEY = `sk_${randomUUID().replace(/-/g, '')}`;

/** A resource object as these checks read it. */
interface Res {
  type: string;
  id: string;
  attributes?: Record<string, unknown>;
  links?: { self?: string };
}
type Headers = Record<string, string>;

describe('resource self links and the canonical player URL', () => {
  let stack: TestStack;
  let ada: RegisteredPlayer;
  const asAda = () => jsonApiHeaders(stack.apiKey, ada.token);
  const asStudio: Headers = { apikey: SECRET_KEY, accept: 'application/vnd.api+json' };

  beforeAll(async () => {
    stack = await startStack({ env: { PUBLIC_BASE_URL: PUBLIC_BASE, CHESTS_DEMO_SECRET_KEY: SECRET_KEY } });
    ada = await registerThroughGateway(stack);
  });
  afterAll(async () => stack?.close());

  /** A GET or write whose answer must be a valid JSON:API document with the status given. */
  async function call(method: 'GET' | 'POST' | 'PATCH', url: string, headers: Headers, status = 200, payload?: unknown) {
    const res = await stack.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) });
    expect(res.statusCode, `${method} ${url}: ${res.body.slice(0, 300)}`).toBe(status);
    const body = res.json() as { data: Res | Res[]; included?: Res[] };
    expectJsonApi(body);
    return body;
  }

  /** Every resource object of a document: its primary data and what it includes. */
  const resourcesOf = (doc: { data: Res | Res[]; included?: Res[] }) => [...[doc.data].flat(), ...(doc.included ?? [])];

  /**
   * Follows every resource's self link with the same credentials: it must be absolute on the
   * public base, and a GET there must answer that very resource (type and id) as primary data.
   * Returns the types that carried one.
   */
  async function expectFetchableSelfLinks(doc: { data: Res | Res[]; included?: Res[] }, headers: Headers): Promise<Set<string>> {
    const seen = new Set<string>();
    for (const r of resourcesOf(doc)) {
      const self = r.links?.self;
      if (self === undefined) continue;
      expect(self.startsWith(`${PUBLIC_BASE}/api/v1/`), self).toBe(true);
      const followed = await call('GET', self.slice(PUBLIC_BASE.length), headers);
      expect(Array.isArray(followed.data), self).toBe(false);
      expect({ type: (followed.data as Res).type, id: (followed.data as Res).id }, self).toEqual({ type: r.type, id: r.id });
      expect((followed.data as Res).links?.self, self).toBe(self);
      seen.add(r.type);
    }
    return seen;
  }

  it("gives each resource that a GET serves on its own a self link to that URL, on the app's public base", { timeout: 180_000 }, async () => {
    const reads: [string, Headers][] = [
      ['/api/v1/chests', asAda()],
      ['/api/v1/chests?fields[chest]=name', asAda()],
      ['/api/v1/collections?page[limit]=2', asAda()],
      ['/api/v1/collectibles?page[limit]=3', asAda()],
      ['/api/v1/banners', asAda()],
      ['/api/v1/banners/kraken-rising/odds', asAda()],
      ['/api/v1/players/me', asAda()],
      ['/api/v1/players/me/fairness', asAda()],
      ['/api/v1/admin/overview', asStudio],
      [`/api/v1/admin/players/${ada.id}`, asStudio],
      ['/api/v1/admin/chests/silver-chest/drops', asStudio],
      ['/api/v1/admin/banners/kraken-rising/stats', asStudio],
    ];
    const seen = new Set<string>();
    for (const [url, headers] of reads) for (const t of await expectFetchableSelfLinks(await call('GET', url, headers), headers)) seen.add(t);

    const catalog = (await call('GET', '/api/v1/chests', asAda())).data as Res[];
    const wooden = catalog.find((c) => c.attributes?.name === 'Wooden Chest')!;
    expect(wooden.links).toEqual({ self: `${PUBLIC_BASE}/api/v1/chests/${wooden.id}` });
    for (const url of [
      `/api/v1/chests/${wooden.id}/odds`,
      `/api/v1/chests/${wooden.id}/odds?rules_version=1`,
      `/api/v1/chests/${wooden.id}/odds/observed`,
    ]) {
      for (const t of await expectFetchableSelfLinks(await call('GET', url, asAda()), asAda())) seen.add(t);
    }
    // An earlier rules version asked for is named by the link, which then answers those odds again.
    const earlier = (await call('GET', `/api/v1/chests/${wooden.id}/odds?rules_version=1`, asAda())).data as Res;
    expect(earlier.links?.self).toBe(`${PUBLIC_BASE}/api/v1/chests/${wooden.id}/odds?rules_version=1`);

    // The player of a session: on registration and login.
    const email = `links-${randomUUID()}@example.com`;
    const attributes = { email, password: TEST_PASSWORD };
    const registered = await call('POST', '/api/v1/players/register', jsonApiHeaders(stack.apiKey), 201, {
      data: { type: 'player', attributes: { ...attributes, password_confirmation: TEST_PASSWORD } },
    });
    const login = await call('POST', '/api/v1/players/login', jsonApiHeaders(stack.apiKey), 200, { data: { type: 'player', attributes } });
    const dee = registered.data as Res;
    expect([dee.links, (login.data as Res).links]).toEqual([{ self: `${PUBLIC_BASE}/api/v1/players/${dee.id}` }, dee.links]);
    const asDee = jsonApiHeaders(stack.apiKey, (registered as unknown as { meta: { access_token: string } }).meta.access_token);
    await expectFetchableSelfLinks(login, asDee);

    // Included resources carry theirs too.
    const collection = ((await call('GET', '/api/v1/collections', asAda())).data as Res[])[0]!;
    const withItems = await call('GET', `/api/v1/collections/${collection.id}?include=collectibles`, asAda());
    expect(withItems.included!.length).toBeGreaterThan(0);
    for (const t of await expectFetchableSelfLinks(withItems, asAda())) seen.add(t);

    // An opening's verification, once its seed is revealed; the owned collectibles it gave.
    const opened = await stack.inject({ method: 'POST', url: `/api/v1/chests/${ada.starterChestId}/open`, headers: asAda() });
    expect(opened.statusCode, opened.body).toBe(200);
    const rotated = await call('POST', '/api/v1/players/me/fairness/rotate', asAda());
    for (const t of await expectFetchableSelfLinks(rotated, asAda())) seen.add(t);
    const verification = await call(
      'GET',
      `/api/v1/openings/${(opened.json() as { meta: { opening_id: string } }).meta.opening_id}/verification`,
      asAda(),
    );
    for (const t of await expectFetchableSelfLinks(verification, asAda())) seen.add(t);
    for (const t of await expectFetchableSelfLinks(await call('GET', '/api/v1/players/me/collection?include=collection', asAda()), asAda()))
      seen.add(t);

    expect([...seen].sort()).toEqual(
      [
        'app_overview',
        'banner',
        'banner_odds',
        'banner_stats',
        'chest',
        'chest_drops',
        'chest_observed_odds',
        'chest_odds',
        'collectible',
        'collection',
        'fairness',
        'opening_verification',
        'player',
      ].sort(),
    );

    // Resources that no GET serves on their own carry none: owned chests, currencies, friends.
    const cleo = await registerThroughGateway(stack);
    const asCleo = jsonApiHeaders(stack.apiKey, cleo.token);
    const inventory = await call('GET', '/api/v1/players/me/chests', asCleo);
    const currencies = await call('GET', '/api/v1/currencies', asCleo);
    await call('POST', '/api/v1/players/me/friends', asCleo, 201, { data: { type: 'player', id: ada.id } });
    const friends = await call('GET', '/api/v1/players/me/friends', asCleo);
    for (const doc of [inventory, currencies, friends]) {
      const resources = resourcesOf(doc);
      expect(resources.length).toBeGreaterThan(0);
      for (const r of resources) expect(r.links, `${r.type} ${r.id}`).toBeUndefined();
    }
  });

  it("answers and updates the player at its canonical URL, the caller's own id, as /players/me does", async () => {
    const me = await call('GET', '/api/v1/players/me?include=chests', asAda());
    const self = (me.data as Res).links!.self!;
    expect(self).toBe(`${PUBLIC_BASE}/api/v1/players/${ada.id}`);
    expect(await call('GET', `/api/v1/players/${ada.id}?include=chests`, asAda())).toEqual(me);
    // Any case of the id names the same player.
    expect(await call('GET', `/api/v1/players/${ada.id.toUpperCase()}?include=chests`, asAda())).toEqual(me);

    const patched = await call('PATCH', `/api/v1/players/${ada.id}`, asAda(), 200, {
      data: { type: 'player', id: ada.id, attributes: { privacy: 'friends', country: 'DE' } },
    });
    expect((patched.data as Res).attributes).toMatchObject({ privacy: 'friends', country: 'DE' });
    expect((patched.data as Res).links).toEqual({ self });
    expect(((await call('GET', '/api/v1/players/me', asAda())).data as Res).attributes).toMatchObject({ privacy: 'friends', country: 'DE' });
  });

  it("answers another player's id as an unknown one (404, whether or not it exists) and changes nothing; a malformed id is a 400", async () => {
    const bob = await registerThroughGateway(stack);
    const asBob = jsonApiHeaders(stack.apiKey, bob.token);
    const before = await call('GET', '/api/v1/players/me', asBob);
    const update = (id: string) => ({ data: { type: 'player', id, attributes: { privacy: 'private' } } });
    for (const id of [bob.id, randomUUID()]) {
      expectError(await stack.inject({ method: 'GET', url: `/api/v1/players/${id}`, headers: asAda() }), 404, 'player_not_found');
      const patch = await stack.inject({ method: 'PATCH', url: `/api/v1/players/${id}`, headers: asAda(), payload: JSON.stringify(update(id)) });
      expect(expectError(patch, 404, 'player_not_found')[0]!.source).toEqual({ parameter: 'id' });
    }
    expect(await call('GET', '/api/v1/players/me', asBob)).toEqual(before);
    expectError(await stack.inject({ method: 'GET', url: '/api/v1/players/not-a-uuid', headers: asAda() }), 400, 'invalid_id');
    // The body's id must still be the caller's (409, as on /players/me).
    const mismatch = await stack.inject({
      method: 'PATCH',
      url: `/api/v1/players/${ada.id}`,
      headers: asAda(),
      payload: JSON.stringify(update(bob.id)),
    });
    expectError(mismatch, 409, 'id_mismatch');
    // Without a token it is a 401, as /players/me.
    expectError(await stack.inject({ method: 'GET', url: `/api/v1/players/${ada.id}`, headers: jsonApiHeaders(stack.apiKey) }), 401, 'missing_token');
  });
});
