import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { domainEventId, encodeJson, EVENT_DATA, OpeningGranted, prefixed } from '@ccs/shared';
import { parseWebhook, verifyWebhook } from '@ccs/client/webhooks';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver, type Received } from '../support/webhook-receiver.js';
import { createApp, registerPlayer, sql, studioGrant, type Player } from '../../services/chests/test/support/chests.js';

/**
 * The banner webhooks through the stack (docs/design.md §8; docs/webhooks.md): a ten-pull of
 * the demo banner kraken-rising sends one banner.pulled per opening besides each opening's
 * chest.opened, with what the opening recorded of the banner; a spark exchange sends one
 * banner.sparked and no chest.opened (no chest was opened). Endpoints filter the two types as any.
 */
describe('banner webhook events (banner.pulled, banner.sparked)', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let game: { appId: string; publishableKey: string; secretKey: string };
  const secrets: Record<string, string> = {};

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    stack = await startStack({ env: { WEBHOOK_POLL_MS: '50', WEBHOOK_ALLOW_TARGETS: receiver.target } });
    game = await createApp(stack);
    // One endpoint for the openings and both banner events, one for sparks only.
    for (const [path, events] of [
      ['/banners', ['chest.opened', 'banner.pulled', 'banner.sparked']],
      ['/sparks', ['banner.sparked']],
    ] as const) {
      const res = await stack.inject({
        method: 'POST',
        url: '/api/v1/admin/webhooks',
        headers: { apikey: game.secretKey, 'content-type': 'application/vnd.api+json' },
        payload: { data: { type: 'webhook_endpoint', attributes: { url: receiver.url(path), events } } },
      });
      expect(res.statusCode, res.body).toBe(201);
      expect([...res.json().data.attributes.events].sort()).toEqual([...events].sort());
      secrets[path] = res.json().data.attributes.secret;
    }
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  const of = (path: string, type: string, p: Player): Received[] =>
    receiver.accepted(path).filter((r) => r.body.type === type && r.body.data.player_id === p.id);

  type Opening = {
    collectibles: { id: string; attributes: { rarity: string } }[];
    meta: { opening_id: string; banner: { id: string; featured: boolean; guaranteed_before: boolean } };
  };

  it('sends banner.pulled with each of a ten-pull’s ten chest.opened, and banner.sparked alone for a spark', async () => {
    const p = await registerPlayer(stack, game.publishableKey);
    await studioGrant(stack, p, 'coins', '25000');
    const banner = await stack.inject({ method: 'GET', url: '/api/v1/banners/kraken-rising', headers: jsonApiHeaders(p.apiKey) });
    expect(banner.statusCode, banner.body).toBe(200);
    const chestTypeId: string = banner.json().data.relationships.chest_type.data.id;

    const pulled = await stack.inject({
      method: 'POST',
      url: '/api/v1/banners/kraken-rising/pull',
      headers: jsonApiHeaders(p.apiKey, p.token),
      payload: { data: { type: 'pull', attributes: { count: 10, currency: 'coins' } } },
    });
    expect(pulled.statusCode, pulled.body).toBe(200);
    const openings = (pulled.json() as { data: Opening[] }).data;
    expect(openings).toHaveLength(10);
    const openingIds = openings.map((o) => o.meta.opening_id);

    await eventually(async () => {
      expect(of('/banners', 'banner.pulled', p)).toHaveLength(10);
      expect(of('/banners', 'chest.opened', p)).toHaveLength(10);
    }, 20_000);
    expect(of('/banners', 'chest.opened', p).map((r) => r.body.data.opening_id)).toEqual(expect.arrayContaining(openingIds));
    for (const r of of('/banners', 'banner.pulled', p)) {
      expect(EVENT_DATA['banner.pulled'].safeParse(r.body.data).success, r.raw).toBe(true);
      expect(verifyWebhook(secrets['/banners']!, String(r.headers['ccs-signature']), r.raw).ok).toBe(true);
      expect(r.headers['ccs-event-type']).toBe('banner.pulled');
      const opening = openings.find((o) => o.meta.opening_id === r.body.data.opening_id);
      expect(opening, `banner.pulled of an opening the pull did not answer: ${r.raw}`).toBeDefined();
      expect(r.body).toMatchObject({ id: domainEventId('banner.pulled', opening!.meta.opening_id), app_id: game.appId });
      expect(r.body.data).toEqual({
        player_id: p.id,
        banner_id: 'kraken-rising',
        opening_id: opening!.meta.opening_id,
        chest_type_id: chestTypeId,
        featured: opening!.meta.banner.featured,
        guaranteed_before: opening!.meta.banner.guaranteed_before,
        items: opening!.collectibles.map((c) => ({ collectible_id: c.id, rarity: c.attributes.rarity })),
        opened_at: r.body.created_at,
      });
    }
    // The chest.opened and banner.pulled of one opening are two events (two ids), one delivery each.
    const ids = receiver.accepted('/banners').map((r) => r.body.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(of('/sparks', 'banner.pulled', p)).toHaveLength(0);

    // Ten pulls, ten spark points: the spark's cost on the demo banner.
    const sparked = await stack.inject({
      method: 'POST',
      url: '/api/v1/banners/kraken-rising/spark',
      headers: jsonApiHeaders(p.apiKey, p.token),
      payload: { data: { type: 'spark', attributes: { collectible_id: 'sea-kraken' } } },
    });
    expect(sparked.statusCode, sparked.body).toBe(201);
    const exchange = sparked.json().data as { id: string; attributes: { created_at: string } };

    await eventually(async () => {
      expect(of('/banners', 'banner.sparked', p)).toHaveLength(1);
      expect(of('/sparks', 'banner.sparked', p)).toHaveLength(1);
    }, 20_000);
    for (const path of ['/banners', '/sparks']) {
      const r = of(path, 'banner.sparked', p)[0]!;
      const event = parseWebhook(secrets[path]!, String(r.headers['ccs-signature']), r.raw);
      expect(event).toEqual({
        id: domainEventId('banner.sparked', exchange.id),
        type: 'banner.sparked',
        created_at: exchange.attributes.created_at,
        app_id: game.appId,
        data: {
          player_id: p.id,
          banner_id: 'kraken-rising',
          exchange_id: exchange.id,
          collectible_id: 'sea-kraken',
          exchanged_at: exchange.attributes.created_at,
        },
      });
      expect(EVENT_DATA['banner.sparked'].safeParse(event.data).success).toBe(true);
    }
    // No chest.opened for the spark: the exchange's grant made exactly one event, stored with it in
    // one statement (so a chest.opened could not be still on its way).
    const stored = await sql<{ type: string }>(stack, `SELECT type FROM egress.webhook_events WHERE app_id = $1 AND body LIKE $2`, [
      game.appId,
      `%${exchange.id}%`,
    ]);
    expect(stored.map((e) => e.type)).toEqual(['banner.sparked']);
    expect(of('/banners', 'chest.opened', p).map((r) => r.body.data.opening_id)).not.toContain(exchange.id);
    expect(of('/banners', 'chest.opened', p)).toHaveLength(10);
  });

  it('still applies a spark exchange granted as an opening (source spark) by an older version: the collectible once, banner.sparked alone', async () => {
    const p = await registerPlayer(stack, game.publishableKey);
    const exchangeId = randomUUID();
    const exchangedAt = new Date().toISOString();
    const legacy = OpeningGranted.payload.parse({
      openingId: exchangeId,
      appId: game.appId,
      playerId: p.id,
      chestTypeId: randomUUID(),
      openedAt: exchangedAt,
      experience: 0,
      rulesVersion: 1,
      items: [{ slot: 0, collectibleId: 'sea-kraken', collectionId: 'sea-creatures', rarity: 'legendary' }],
      source: 'spark',
      bannerId: 'kraken-rising',
    });
    await stack.nc.jetstream().publish(prefixed(stack.env.NATS_PREFIX!, OpeningGranted.subject), encodeJson(legacy), { msgID: exchangeId });
    await eventually(async () => {
      expect(of('/sparks', 'banner.sparked', p)).toHaveLength(1);
      const owned = await sql<{ collectible_id: string }>(stack, 'SELECT collectible_id FROM collections.owned_collectibles WHERE opening_id = $1', [
        exchangeId,
      ]);
      expect(owned.map((o) => o.collectible_id)).toEqual(['sea-kraken']);
    }, 20_000);
    const r = of('/sparks', 'banner.sparked', p)[0]!;
    expect(parseWebhook(secrets['/sparks']!, String(r.headers['ccs-signature']), r.raw)).toEqual({
      id: domainEventId('banner.sparked', exchangeId),
      type: 'banner.sparked',
      created_at: exchangedAt,
      app_id: game.appId,
      data: { player_id: p.id, banner_id: 'kraken-rising', exchange_id: exchangeId, collectible_id: 'sea-kraken', exchanged_at: exchangedAt },
    });
    const stored = await sql<{ type: string }>(stack, `SELECT type FROM egress.webhook_events WHERE app_id = $1 AND body LIKE $2`, [
      game.appId,
      `%${exchangeId}%`,
    ]);
    expect(stored.map((e) => e.type)).toEqual(['banner.sparked']);
  });
});
