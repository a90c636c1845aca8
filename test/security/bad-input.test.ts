import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, AdminCreateWebhook, readContentFile } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../support/stack.js';
import { OpenApiDocumentSchema } from '../../services/gateway/test/support/openapi-document.js';
import { casesFor, hostile, type Baseline, type Context, type HostileCase, type Target } from './support/hostile-cases.js';
import { opViews, seeded, type OpView } from './support/operations.js';
import { playerState, problemsOf } from './support/checks.js';
import { applePki } from '../support/store/apple-pki.js';
import { generateServiceAccountKey } from '../support/store/google-stand-in.js';
import { appOfToken } from '../support/grant-currency.js';

/**
 * "Every bad input gets a clear JSON:API error with the right status and nothing changes; no 500
 * for anything a client can send." For every operation of the gateway's own OpenAPI document, a
 * deterministic (seeded) barrage of hostile requests: malformed path ids, hostile query strings,
 * bodies that are not JSON, not objects or mistyped member by member (from the documented request
 * schema), prototype-pollution keys, wrong media types, missing or garbage keys and tokens, bad
 * Idempotency-Keys. Each must get exactly its documented status, listed for that operation, as a
 * JSON:API error document without internals; the player's state must be the same afterwards.
 */

const SEED = 0x5ec0de;
const PASSWORD = 'Str0ng!pass';
/** The optional compliance attributes of registration and PATCH /players/me, valid, for the barrage to mutate. */
const DECLARED = { country: 'DE', birth_year: 1990 };
/** A Pub/Sub push of a Google Play test notification, as Pub/Sub sends it (without its OIDC token here). */
const googlePush = {
  message: {
    data: Buffer.from(
      JSON.stringify({ version: '1.0', packageName: 'com.example.chests', eventTimeMillis: '1', testNotification: { version: '1.0' } }),
    ).toString('base64'),
    messageId: '136969346945',
    publishTime: '2026-11-28T10:00:00Z',
  },
  subscription: 'projects/example-chests/subscriptions/play-rtdn',
};

/** A content file with a trading block in which every member is set (and trading is off). */
function withTrading(content: ReturnType<typeof readContentFile>) {
  const rarity = content.rarities[0]!.id;
  const currency = content.currencies[0]!.code;
  const trading = {
    enabled: false,
    friends_only: true,
    same_rarity: true,
    rarities: { [rarity]: { tradable: true, token_cost: 1 } },
    token_currency: currency,
    dissolve: { [rarity]: 1 },
    dissolve_keeps: 1,
    stamina: { max: 3, regen_hours: 8, refill: { currency, amount: 1 } },
    offer_ttl_hours: 72,
    min_account_age_hours: 0,
    daily_offer_cap: 20,
  };
  return { ...content, trading };
}

describe('bad input: every hostile request gets its documented 4xx and changes nothing', () => {
  let stack: TestStack;
  let ops: OpView[];
  let baselines: Record<string, Baseline>;
  let ctx: Context;
  let refreshToken: string;
  let before: Awaited<ReturnType<typeof playerState>>;
  const secrets: string[] = [];

  const send = (c: HostileCase) =>
    stack.inject({ method: c.method as 'GET', url: c.url, headers: c.headers, ...(c.payload === undefined ? {} : { payload: c.payload }) });
  const call = async (method: 'GET' | 'POST', url: string, token?: string, body?: unknown) => {
    const res = await stack.inject({
      method,
      url,
      headers: jsonApiHeaders(stack.apiKey, token),
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    expect(res.statusCode, `${method} ${url}: ${res.body.slice(0, 300)}`).toBeLessThan(300);
    return res.json();
  };

  beforeAll(async () => {
    // The store trusts the test certificate authority: the App Store transaction and refund below are real ones.
    const pki = await applePki();
    stack = await startStack({ env: { STORE_APPLE_ROOT_CERTS: pki.rootPem } });
    const attributes = { email: 'x@example.com', password: PASSWORD, password_confirmation: PASSWORD };
    // An adult: the demo content's CN rule pack refuses store payments to a player of unknown age.
    const registered = await call('POST', '/api/v1/players/register', undefined, {
      data: { type: 'player', attributes: { ...attributes, birth_year: DECLARED.birth_year }, relationships: {} },
    });
    const token: string = registered.meta.access_token;
    const starter: string = registered.meta.welcome_bonus.starter_chest;
    refreshToken = registered.meta.refresh_token;
    const guest = await call('POST', '/api/v1/players/anonymous');
    secrets.push(stack.apiKey, token, refreshToken, guest.meta.access_token);
    const doc = OpenApiDocumentSchema.parse((await stack.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json());
    ops = opViews(doc);

    // Real ids for the targets, and a collection to compare: buy a chest and open it.
    const coins = (await call('GET', '/api/v1/currencies', token)).data.find(
      (c: { attributes: { code: string } }) => c.attributes.code === 'coins',
    ).id;
    const chestType = (await call('GET', '/api/v1/chests')).data[0].id;
    const collectionId = (await call('GET', '/api/v1/collections')).data[0].id;
    const collectibleId = (await call('GET', '/api/v1/collectibles')).data[0].id;
    await eventually(async () =>
      expect((await call('GET', '/api/v1/players/me/chests', token)).data.map((c: { id: string }) => c.id)).toContain(starter),
    );
    const purchase = { data: { type: 'purchase', attributes: { currency: 'coins', quantity: 1 } } };
    const bought = await call('POST', `/api/v1/chests/${chestType}/purchase`, token, purchase);
    const openingId: string = (await call('POST', `/api/v1/chests/${bought.data[0].id}/open`, token)).meta.opening_id;
    await eventually(async () => {
      expect((await call('GET', '/api/v1/players/me/collection', token)).data.length).toBeGreaterThan(0);
      expect((await call('GET', '/api/v1/players/me', token)).data.attributes.experience).toBeGreaterThan(0);
    });
    // A verified App Store purchase (its refund is the notification's target), and a transaction
    // never submitted (the purchase's target): a hostile variant of either that got through would
    // change the player's balances.
    const storeBody = (signed: string) => ({ data: { type: 'store_purchase', attributes: { platform: 'apple', signed_transaction: signed } } });
    const granted = await pki.signTransaction({ productId: 'com.example.chests.gems_100', appAccountToken: registered.data.id });
    await call('POST', '/api/v1/players/me/store/purchases', token, storeBody(granted));
    const unsubmitted = await pki.signTransaction({ productId: 'com.example.chests.gems_500', appAccountToken: registered.data.id });
    const unknownProduct = await pki.signTransaction({ productId: 'com.example.chests.no_such_product', appAccountToken: registered.data.id });
    const refund = { signedPayload: await pki.signNotification({ notificationType: 'REFUND', signedTransactionInfo: granted }) };
    const demoAppId = appOfToken(token);
    before = await playerState(stack.inject, stack.apiKey, token);

    const studio = await stack.bus.request(AdminCreateApp, { name: 'Studio tools' }, { requestId: 'bad-input-studio' });
    secrets.push(studio.secretKey);
    const hook = await stack.bus.request(
      AdminCreateWebhook,
      { appId: studio.appId, url: 'https://hooks.example.com/ccs' },
      { requestId: 'bad-input-webhook', appId: studio.appId },
    );
    secrets.push(hook.secret);
    const rng = seeded(SEED);
    ctx = { apiKey: stack.apiKey, token, rng };
    const unknown = rng.uuid();
    const same = (t: Target, safeStatus: number): Baseline => ({ target: t, safe: t, safeStatus });
    const player = (params: Record<string, string> = {}, body?: unknown): Target => ({ params, token, body });
    const login = same({ params: {}, body: { data: { type: 'player', attributes: { email: 'x@example.com', password: 'Wr0ng!pass' } } } }, 401);
    const open = { target: player({ id: starter }), safe: player({ id: unknown }), safeStatus: 404 };
    const skipBody = { data: { type: 'unlock', attributes: { skip_with: 'gems' } } };
    const credit = {
      target: player({ currency_id: coins }, { amount: '1' }),
      safe: player({ currency_id: unknown }, { amount: '1' }),
      safeStatus: 404,
    };
    baselines = {
      listChests: same(player(), 200),
      getChest: same(player({ id: chestType }), 200),
      getChestOdds: same(player({ id: chestType }), 200),
      getObservedOdds: same(player({ id: chestType }), 200),
      listOddsLog: same(player(), 200),
      listBanners: same(player(), 200),
      getBanner: same(player({ id: 'kraken-rising' }), 200),
      getBannerOdds: same(player({ id: 'kraken-rising' }), 200),
      pullBanner: {
        target: player({ id: 'kraken-rising' }, { data: { type: 'pull', attributes: { count: 1, currency: 'coins' } } }),
        safe: player({ id: 'no-such-banner' }, { data: { type: 'pull', attributes: { count: 1, currency: 'coins' } } }),
        safeStatus: 404,
      },
      // Without spark points: 409 spark_points_insufficient, nothing changes.
      sparkBanner: same(player({ id: 'kraken-rising' }, { data: { type: 'spark', attributes: { collectible_id: 'sea-kraken' } } }), 409),
      openChest: open,
      openChestPost: open,
      openChests: {
        target: player({}, { data: [{ type: 'chest', id: starter }] }),
        safe: player({}, { data: [{ type: 'chest', id: unknown }] }),
        safeStatus: 404,
      },
      // The starter chest has no timer: 409 chest_not_time_locked, nothing changes.
      unlockChest: { target: player({ id: starter }, skipBody), safe: player({ id: unknown }, skipBody), safeStatus: 404 },
      purchaseChests: { target: player({ id: chestType }, purchase), safe: player({ id: unknown }, purchase), safeStatus: 404 },
      listCollectibles: same(player(), 200),
      getCollectible: same(player({ id: collectibleId }), 200),
      listCollections: same(player(), 200),
      getCollection: same(player({ id: collectionId }), 200),
      listCollectionCollectibles: same(player({ id: collectionId }), 200),
      listCurrencies: same(player(), 200),
      listCurrenciesAlias: same(player(), 200),
      creditCurrency: credit,
      creditCurrencyAlias: credit,
      getOpenApiDocument: same({ params: {} }, 200),
      getInventory: same(player({ id: 'me' }), 200),
      createGuest: same({ params: {} }, 201),
      login,
      loginAlias: login,
      logout: {
        target: player({}, { data: { type: 'session', attributes: { refresh_token: refreshToken } } }),
        safe: { params: {}, token: guest.meta.access_token, body: { data: { type: 'session', attributes: {} } } },
        safeStatus: 204,
      },
      getMe: same(player(), 200),
      updateMe: {
        // Every member it can change, so each is mutated (the compliance attributes too).
        target: player({}, { data: { type: 'player', attributes: { privacy: 'private', ...DECLARED } } }),
        safe: player({}, { data: { type: 'player', attributes: { privacy: before.player.privacy } } }),
        safeStatus: 200,
      },
      // The player's canonical URL: the caller's own id; another id is a 404 that changes nothing.
      getPlayer: same(player({ id: registered.data.id }), 200),
      updatePlayer: {
        target: player({ id: registered.data.id }, { data: { type: 'player', attributes: { privacy: 'private', ...DECLARED } } }),
        safe: player({ id: unknown }, { data: { type: 'player', attributes: { privacy: 'private', ...DECLARED } } }),
        safeStatus: 404,
      },
      getPlayerCollection: same(player(), 200),
      addFriend: {
        target: player({}, { data: { type: 'player', id: guest.data.id } }),
        safe: player({}, { data: { type: 'player', id: unknown } }),
        safeStatus: 404,
      },
      listFriends: same(player(), 200),
      removeFriend: same(player({ id: unknown }), 404),
      listOpenings: same(player(), 200),
      getFairness: same(player(), 200),
      listPity: same(player(), 200),
      getSpendLimits: same(player(), 200),
      listMailbox: same(player(), 200),
      claimMailboxItem: same(player({ id: unknown }), 404),
      // Rotations as the guest: the player's own seed pair (and its openings' state) never changes.
      setClientSeed: {
        target: player({}, { data: { type: 'fairness', attributes: { client_seed: 'lucky' } } }),
        safe: { params: {}, token: guest.meta.access_token, body: { data: { type: 'fairness', attributes: { client_seed: 'lucky' } } } },
        safeStatus: 200,
      },
      rotateSeed: { target: player(), safe: { params: {}, token: guest.meta.access_token }, safeStatus: 200 },
      verifyOpening: { target: player({ id: openingId }), safe: player({ id: unknown }), safeStatus: 404 },
      refreshSession: same({ params: {}, body: { data: { type: 'session', attributes: { refresh_token: `rt_${rng.b64(40)}` } } } }, 401),
      registerPlayer: same({ params: {}, body: { data: { type: 'player', attributes: { ...attributes, ...DECLARED }, relationships: {} } } }, 409),
      // The admin API, with a studio app's secret key: reads only, never this player's app.
      adminOverview: same({ params: {}, apiKey: studio.secretKey }, 200),
      adminGetPlayer: same({ params: { id: unknown }, apiKey: studio.secretKey }, 404),
      adminListAudit: same({ params: {}, apiKey: studio.secretKey }, 200),
      // The studio's correction of a declared profile: no such player in the studio app, so nothing changes.
      adminUpdatePlayer: same(
        { params: { id: unknown }, apiKey: studio.secretKey, body: { data: { type: 'player', attributes: { country: 'DE', birth_year: 1990 } } } },
        404,
      ),
      adminSimulate: {
        target: {
          params: { id: 'silver-chest' },
          apiKey: studio.secretKey,
          body: { data: { type: 'simulation', attributes: { opens: 100, seed: 'ab' } } },
        },
        safe: { params: { id: 'no-such-chest' }, apiKey: studio.secretKey, body: { data: { type: 'simulation', attributes: { opens: 100 } } } },
        safeStatus: 404,
      },
      adminChestDrops: {
        target: { params: { id: 'silver-chest' }, apiKey: studio.secretKey },
        safe: { params: { id: 'no-such-chest' }, apiKey: studio.secretKey },
        safeStatus: 404,
      },
      adminBannerStats: {
        target: { params: { id: 'kraken-rising' }, apiKey: studio.secretKey },
        safe: { params: { id: 'no-such-banner' }, apiKey: studio.secretKey },
        safeStatus: 404,
      },
      adminListContentVersions: same({ params: {}, apiKey: studio.secretKey }, 200),
      adminContentDiff: same({ params: { version: '1' }, apiKey: studio.secretKey }, 200),
      // Loading the studio app's content again is harmless (a new version of the same content).
      // With every trading member present (trading left off), so that each one mutated is the one wrong.
      adminLoadContent: same({ params: {}, apiKey: studio.secretKey, body: withTrading(readContentFile()) }, 201),
      // Webhooks of the studio app (it has no players: nothing is ever sent).
      adminListWebhooks: same({ params: {}, apiKey: studio.secretKey }, 200),
      adminCreateWebhook: same(
        { params: {}, apiKey: studio.secretKey, body: { data: { type: 'webhook_endpoint', attributes: { url: 'https://hooks.example.com/more' } } } },
        201,
      ),
      adminUpdateWebhook: {
        target: {
          params: { id: hook.endpoint.id },
          apiKey: studio.secretKey,
          body: { data: { type: 'webhook_endpoint', attributes: { description: 'x' } } },
        },
        safe: { params: { id: unknown }, apiKey: studio.secretKey, body: { data: { type: 'webhook_endpoint', attributes: { description: 'x' } } } },
        safeStatus: 404,
      },
      adminDeleteWebhook: same({ params: { id: unknown }, apiKey: studio.secretKey }, 404),
      adminListWebhookDeliveries: same({ params: { id: hook.endpoint.id }, apiKey: studio.secretKey }, 200),
      adminRetryWebhookDelivery: same({ params: { id: hook.endpoint.id, delivery_id: unknown }, apiKey: studio.secretKey }, 404),
      // The studio's grant of currency: no such player in the studio app, so nothing is ever credited.
      adminCreditPlayer: same(
        {
          params: { id: unknown },
          apiKey: studio.secretKey,
          body: { data: { type: 'credit', attributes: { currency: 'gems', amount: '1', reference: 'bad-input-1' } } },
        },
        404,
      ),
      // The support desk, with the studio app's key: its searches find nothing of this player's app,
      // and its actions name no player of it (404), so nothing is granted, ended or locked.
      adminListPlayers: same({ params: {}, apiKey: studio.secretKey }, 200),
      adminSearchPlayers: same(
        { params: {}, apiKey: studio.secretKey, body: { data: { type: 'player_search', attributes: { email_prefix: 'x@' } } } },
        200,
      ),
      adminGrantChests: same(
        {
          params: { id: unknown },
          apiKey: studio.secretKey,
          body: {
            data: { type: 'chest_grant', attributes: { chest_type: 'silver-chest', quantity: 1, reference: 'bad-input-1' } },
            meta: { note: 'n' },
          },
        },
        404,
      ),
      adminRevokeSessions: same({ params: { id: unknown }, apiKey: studio.secretKey, body: { meta: { note: 'n' } } }, 404),
      adminLockPlayer: same({ params: { id: unknown }, apiKey: studio.secretKey, body: { meta: { note: 'n' } } }, 404),
      adminUnlockPlayer: same({ params: { id: unknown }, apiKey: studio.secretKey, body: { meta: { note: 'n' } } }, 404),
      // Store: the purchase (safe: a product the app does not sell, 422 unknown_product), the stores'
      // notifications (safe: an app that does not exist, 404; the Google push has no token: 401 at
      // best), and the studio's store settings and reads (the studio app's: it has no players).
      verifyStorePurchase: { target: player({}, storeBody(unsubmitted)), safe: player({}, storeBody(unknownProduct)), safeStatus: 422 },
      appleStoreNotification: {
        target: { params: { app_id: demoAppId }, body: refund },
        safe: { params: { app_id: unknown }, body: refund },
        safeStatus: 404,
      },
      googleStoreNotification: {
        target: { params: { app_id: demoAppId }, body: googlePush },
        safe: { params: { app_id: unknown }, body: googlePush },
        safeStatus: 404,
      },
      adminSetGoogleCredentials: same({ params: {}, apiKey: studio.secretKey, body: await generateServiceAccountKey() }, 204),
      adminPlayerStore: same({ params: { id: unknown }, apiKey: studio.secretKey }, 404),
      adminStoreProducts: same({ params: {}, apiKey: studio.secretKey }, 200),
      // The demo content does not enable trading: an offer or a dissolve of a real copy is refused
      // (403 trading_disabled), and every trade id is unknown (404), so none of them can change anything.
      dissolveCollectible: same(player({ collectible_id: collectibleId }, { data: { type: 'dissolve', attributes: { quantity: 1 } } }), 403),
      offerTrade: same(
        player(
          {},
          {
            data: {
              type: 'trade',
              attributes: { give: collectibleId, want: collectibleId },
              relationships: { partner: { data: { type: 'player', id: unknown } } },
            },
          },
        ),
        403,
      ),
      acceptTrade: same(player({ id: unknown }), 404),
      declineTrade: same(player({ id: unknown }), 404),
      cancelTrade: same(player({ id: unknown }), 404),
      getTrade: same(player({ id: unknown }), 404),
      listTrades: same(player(), 200),
      playerTradeHistory: same(player({ id: 'me' }), 200),
      adminPlayerTrades: same({ params: { id: unknown }, apiKey: studio.secretKey }, 404),
      adminCancelTrade: same({ params: { id: unknown }, apiKey: studio.secretKey, body: { meta: { note: 'bad input' } } }, 404),
      liveness: same({ params: {} }, 200),
      metrics: same({ params: {} }, 200),
      readiness: same({ params: {} }, 200),
    };
  });
  afterAll(async () => stack?.close());

  it('has a baseline for every documented operation, answered as documented', async () => {
    expect(
      ops.map((o) => o.operationId).filter((id) => !baselines[id]),
      'operations without a baseline',
    ).toEqual([]);
    for (const op of ops) {
      const b = baselines[op.operationId]!;
      const res = await send(hostile(op, b.safe, ctx, { name: 'baseline', expect: b.safeStatus }));
      expect([op.operationId, res.statusCode], res.body.slice(0, 300)).toEqual([op.operationId, b.safeStatus]);
      expect(op.statuses.has(b.safeStatus), op.operationId).toBe(true);
    }
  });

  it('answers every hostile request with its documented status, as a clean JSON:API error', { timeout: 180_000 }, async () => {
    const build = () => {
      const rng = seeded(SEED + 1);
      return ops.flatMap((op) => casesFor(op, baselines[op.operationId]!, { ...ctx, rng }));
    };
    const cases = build();
    const failures: string[] = [];
    for (const c of cases) {
      const problems = problemsOf(c, await send(c), secrets);
      for (const p of problems) failures.push(`${c.method} ${c.url.slice(0, 80)} [${c.name}]: ${p}`);
    }
    expect(failures, `${failures.length} of ${cases.length} requests`).toEqual([]);
    // The barrage is what it claims: large, deterministic, and mostly refusals.
    expect(cases.length).toBeGreaterThan(1500);
    expect(cases.filter((c) => c.expect >= 400).length / cases.length).toBeGreaterThan(0.9);
    const shape = (cs: HostileCase[]) => cs.map((c) => `${c.name} ${c.url} ${c.payload?.length}`);
    expect(shape(build())).toEqual(shape(cases));
  });

  it('regressions the barrage found, each answered with its code and culprit', async () => {
    const inject = (method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = {}) =>
      stack.inject({
        method,
        url,
        headers: { ...jsonApiHeaders(stack.apiKey), ...headers },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    const errorsOf = (res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string) => {
      expect(res.statusCode, res.body).toBe(status);
      expect(String(res.headers['content-type'])).toContain('application/vnd.api+json');
      expect(res.headers['x-request-id']).toBeTruthy();
      const errors = JSON.parse(res.body).errors as { code: string; source?: Record<string, string> }[];
      expect(errors.map((e) => e.code)).toContain(code);
      return errors[0]!.source;
    };
    // NUL in text reached Postgres ("invalid byte sequence"): 500 on login/register and filters.
    const login = { data: { type: 'player', attributes: { email: 'x\u0000@example.com', password: PASSWORD } } };
    expect(errorsOf(await inject('POST', '/api/v1/players/login', login), 422, 'invalid_field')).toEqual({ pointer: '/data/attributes/email' });
    expect(errorsOf(await inject('GET', '/api/v1/chests?filter[name][contains]=a%00'), 400, 'invalid_filter')).toEqual({
      parameter: 'filter[name][contains]',
    });
    expect(errorsOf(await inject('GET', '/api/v1/collectibles?filter[rarity]=%00'), 400, 'invalid_filter')).toEqual({ parameter: 'filter[rarity]' });
    // Query members named like Object.prototype's were dropped silently (the request went through).
    for (const name of ['__proto__', 'constructor', 'hasOwnProperty']) {
      expect(errorsOf(await inject('GET', `/api/v1/chests?${name}[x]=1`), 400, 'unknown_parameter')).toEqual({ parameter: name });
    }
    // Router errors (overlong segment, broken encoding) had no x-request-id.
    errorsOf(await inject('GET', `/api/v1/chests/${'a'.repeat(501)}`), 414, 'uri_too_long');
    errorsOf(await inject('GET', '/api/v1/chests/%E0%A4%A'), 400, 'bad_url');
    // /metrics was registered before the JSON:API error handler: its errors were Fastify's JSON.
    errorsOf(await inject('GET', '/metrics', undefined, { accept: 'application/vnd.api+json; ext=x' }), 406, 'not_acceptable');
  });

  it('changed nothing: balances, inventory, collection, profile, friends, openings, session, prototypes', async () => {
    expect(await playerState(stack.inject, stack.apiKey, ctx.token)).toEqual(before);
    // The session survived every hostile logout and refresh.
    const refreshed = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/refresh',
      headers: jsonApiHeaders(stack.apiKey),
      payload: JSON.stringify({ data: { type: 'session', attributes: { refresh_token: refreshToken } } }),
    });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    // No prototype pollution in this process, where the gateway ran.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
  });
});
