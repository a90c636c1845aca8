import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_DATA, readContentFile, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@ccs/shared';
import { verifyWebhook } from '@ccs/client/webhooks';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver, type Received } from '../support/webhook-receiver.js';
import { catalogIds, createApp, open, purchase, registerPlayer, sql, type Player } from '../../services/chests/test/support/chests.js';
import { grantAndWait, openingGrant } from '../e2e/collections/support.js';

/**
 * Every event type, from a real player's life through the gateway (register, buy, credit, open,
 * complete a collection), arrives once per fact at an endpoint that takes them all, with the
 * documented data (docs/webhooks.md), signed.
 */
describe('webhook events', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let game: { appId: string; publishableKey: string; secretKey: string };
  let secret: string;
  let player: Player;
  const content = readContentFile();
  const rewarded = content.collections.find((c) => c.completion_reward)!;

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    stack = await startStack({ env: { WEBHOOK_POLL_MS: '50', WEBHOOK_ALLOW_TARGETS: receiver.target } });
    game = await createApp(stack);
    const res = await stack.inject({
      method: 'POST',
      url: '/api/v1/admin/webhooks',
      headers: { apikey: game.secretKey, 'content-type': 'application/vnd.api+json' },
      payload: { data: { type: 'webhook_endpoint', attributes: { url: receiver.url('/all') } } },
    });
    expect(res.statusCode, res.body).toBe(201);
    secret = res.json().data.attributes.secret;
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  /**
   * The studio grants gems (a paid currency: players cannot credit it, docs/design.md §6) with its secret
   * key; the wallet writes currency.credited for it as for any credit.
   */
  async function studioCredit(app: { secretKey: string }, playerId: string, currency: string, amount: string, reference: string) {
    const res = await stack.inject({
      method: 'POST',
      url: `/api/v1/admin/players/${playerId}/credits`,
      headers: { apikey: app.secretKey, 'content-type': 'application/vnd.api+json', accept: 'application/vnd.api+json' },
      payload: { data: { type: 'credit', attributes: { currency, amount, reference } } },
    });
    expect(res.statusCode, res.body).toBe(201);
  }

  const of = (type: WebhookEventType, playerId = player.id): Received[] =>
    receiver.accepted('/all').filter((r) => r.body.type === type && r.body.data.player_id === playerId);

  it('sends player.registered, chest.purchased, currency.credited, chest.opened and collection.completed with their documented data', async () => {
    player = await registerPlayer(stack, game.publishableKey);
    const ids = await catalogIds(stack, game.publishableKey);
    const silver = Object.entries(ids).find(([name]) => /silver/i.test(name))![1];
    const bought = await purchase(stack, player, silver, 'coins', 1, 'buy-once');
    expect(bought.statusCode, bought.body).toBe(201);
    // The same purchase retried with its key: no second chest, no second event.
    expect((await purchase(stack, player, silver, 'coins', 1, 'buy-once')).statusCode).toBeLessThan(300);
    const boughtChest: string = bought.json().data[0].id;
    await studioCredit(game, player.id, 'gems', '7', 'receipt-7');
    const opened = await open(stack, player, boughtChest);
    expect(opened.statusCode, opened.body).toBe(200);
    // Every collectible of the rewarded collection, granted as one opening: the collection completes.
    await grantAndWait(
      stack,
      openingGrant(
        game.appId,
        player.id,
        rewarded.collectibles.map((c) => ({ collectibleId: c.id, collectionId: rewarded.id, rarity: c.rarity })),
      ),
    );

    await eventually(async () => {
      expect(of('player.registered')).toHaveLength(1);
      expect(of('chest.purchased')).toHaveLength(1);
      expect(of('chest.opened').length).toBeGreaterThanOrEqual(2);
      expect(of('collection.completed')).toHaveLength(1);
      const reasons = of('currency.credited').map((r) => r.body.data.reason);
      expect(reasons).toEqual(expect.arrayContaining(['collection_reward']));
      expect(of('currency.credited').some((r) => r.body.data.currency === 'gems' && r.body.data.amount === '7.00')).toBe(true);
    }, 20_000);

    for (const type of WEBHOOK_EVENT_TYPES) {
      for (const r of of(type)) {
        expect(EVENT_DATA[type].safeParse(r.body.data).success, `${type}: ${r.raw}`).toBe(true);
        expect(r.body.app_id).toBe(game.appId);
        expect(verifyWebhook(secret, String(r.headers['ccs-signature']), r.raw).ok).toBe(true);
      }
    }
    expect(of('player.registered')[0]!.body.data).toMatchObject({ player_id: player.id, is_anonymous: false });
    expect(of('chest.purchased')[0]!.body.data).toMatchObject({
      inventory_chest_id: boughtChest,
      chest_type_id: silver,
      // Money as every event writes it: a decimal string with two places ("500.00", as currency.credited's amount).
      price: { currency: 'coins', amount: expect.stringMatching(/^\d+\.\d{2}$/) },
    });
    expect(of('chest.opened').map((r) => r.body.data.opening_id)).toContain(opened.json().meta.opening_id);
    expect(of('collection.completed')[0]!.body.data).toMatchObject({ collection_id: rewarded.id, reward: rewarded.completion_reward });
    // One event per fact: ids are unique among what was accepted.
    const accepted = receiver.accepted('/all').map((r) => r.body.id);
    expect(new Set(accepted).size).toBe(accepted.length);
  });

  it('writes currency.credited only for an app whose webhooks take it: no cost on the credits of an app without webhooks', async () => {
    const quiet = await createApp(stack);
    const p = await registerPlayer(stack, quiet.publishableKey);
    await studioCredit(quiet, p.id, 'gems', '3', 'receipt-3');
    const credited = () =>
      sql<{ n: number }>(stack, `SELECT count(*)::int AS n FROM wallet.outbox WHERE subject = 'grants.events' AND payload->>'appId' = $1`, [
        quiet.appId,
      ]).then((r) => r[0]!.n);
    expect(await credited()).toBe(0);
    // An endpoint that takes currency.credited: the wallet hears of it (WebhooksChanged) and writes the next credit's event.
    const res = await stack.inject({
      method: 'POST',
      url: '/api/v1/admin/webhooks',
      headers: { apikey: quiet.secretKey, 'content-type': 'application/vnd.api+json' },
      payload: { data: { type: 'webhook_endpoint', attributes: { url: receiver.url('/quiet'), events: ['currency.credited'] } } },
    });
    expect(res.statusCode, res.body).toBe(201);
    let n = 0;
    await eventually(async () => {
      await studioCredit(quiet, p.id, 'gems', '1', `receipt-1-${n++}`);
      expect(await credited()).toBeGreaterThan(0);
    }, 10_000);
    await eventually(async () =>
      expect(receiver.accepted('/quiet').some((r) => r.body.data.player_id === p.id && r.body.data.amount === '1.00')).toBe(true),
    );
  });
});
