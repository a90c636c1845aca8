import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_DATA } from '@ccs/shared';
import { verifyWebhook } from '@ccs/client/webhooks';
import { eventually, jsonApiHeaders } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { WebhookReceiver, type Received } from '../../support/webhook-receiver.js';
import type { NotificationOptions } from '../../support/store/apple-pki.js';
import type { RegisteredPlayer } from '../../support/register.js';
import {
  appleGems,
  balances,
  inventoryIds,
  newPlayer,
  postAppleNotification,
  startStoreStack,
  submitApple,
  type StoreStack,
} from '../../support/store/store-stack.js';
import { defaultCatalogIds, open, purchase, sql } from '../../../services/chests/test/support/chests.js';
import { patchMe } from '../../../services/chests/test/support/compliance.js';

const STARTER_PACK = 'com.example.chests.starter_pack';
const GEMS_100 = 'com.example.chests.gems_100';

/**
 * App Store refunds through the running stack: Server Notifications V2 signed by the test
 * authority, posted to the app's notification URL, take back what a verified purchase granted
 * (a debt when it was spent, the unopened chests of a pack), a reversal grants it again, each
 * notification applies once and in the store's order whatever the arrival order, and a refund that
 * comes before (or races) the player's submission never leaves a grant without its claw-back.
 */
describe('App Store refunds (Server Notifications V2)', () => {
  let s: StoreStack;
  let receiver: WebhookReceiver;
  let webhookSecret: string;
  let catalog: Record<string, string>;

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    s = await startStoreStack({ env: { WEBHOOK_POLL_MS: '50', WEBHOOK_ALLOW_TARGETS: receiver.target } });
    const res = await s.stack.inject({
      method: 'POST',
      url: '/api/v1/admin/webhooks',
      headers: { apikey: s.secretKey, 'content-type': 'application/vnd.api+json' },
      payload: {
        data: { type: 'webhook_endpoint', attributes: { url: receiver.url('/store'), events: ['store.purchase_verified', 'store.refunded'] } },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    webhookSecret = res.json().data.attributes.secret;
    catalog = await defaultCatalogIds(s.stack);
  });
  afterAll(async () => {
    await s?.close();
    await receiver?.close();
  });

  /** Submits a new App Store transaction of `productId` for the player (201 expected): the JWS and the answer's document. */
  async function buy(p: RegisteredPlayer, productId = 'com.example.chests.gems_500') {
    const jws = await appleGems(s, p.id, { productId });
    const res = await submitApple(s, p.token, jws);
    expect(res.statusCode, res.body).toBe(201);
    return { jws, body: res.json() };
  }

  /** Posts a notification signed by the test authority (200 expected): its `meta.outcome`. */
  async function notify(options: NotificationOptions & { signedTransactionInfo?: string }): Promise<string> {
    return post(await s.pki.signNotification(options));
  }
  async function post(signedPayload: string): Promise<string> {
    const res = await postAppleNotification(s, signedPayload);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    return body.meta.outcome;
  }

  /** The player's balances as numbers. */
  const amounts = async (p: RegisteredPlayer) =>
    Object.fromEntries(Object.entries(await balances(s, p.token)).map(([code, amount]) => [code, Number(amount)]));

  /** The player's wallet ledger rows of a reason. */
  const ledger = (p: RegisteredPlayer, reason: string) =>
    sql<{ delta: string; reference: string }>(
      s.stack,
      'SELECT delta::text, reference FROM wallet.ledger WHERE player_id = $1 AND reason = $2 ORDER BY id',
      [p.id, reason],
    );

  /** The store's refunds and reversals of a purchase, in order. */
  const refundsOf = (purchaseId: string) =>
    sql<{ id: string; kind: string; reason: string }>(
      s.stack,
      'SELECT id, kind, reason FROM store.refunds WHERE purchase_id = $1 ORDER BY created_at',
      [purchaseId],
    );

  it('takes back spent gems below zero on REFUND: a debt shown by GET /currencies that blocks gem spends; a redelivery changes nothing; REFUND_REVERSED gives them back', async () => {
    const p = await newPlayer(s);
    // Gems are a paid currency: spending them passes the compliance gate (an allowed country and age).
    expect((await patchMe(s.stack, p, { country: 'DE', birth_year: 1990 })).statusCode).toBe(200);
    const start = await amounts(p);
    const { jws, body } = await buy(p);
    const bought = await purchase(s.stack, p, catalog['Golden Chest']!, 'gems');
    expect(bought.statusCode, bought.body).toBeLessThan(300);
    const spent = start.gems! + 500 - 50;
    expect((await amounts(p)).gems).toBe(spent);

    const refund = await s.pki.signNotification({ notificationType: 'REFUND', signedTransactionInfo: jws });
    expect(await post(refund)).toBe('applied');
    const debt = 500 - spent;
    await eventually(async () => expect((await amounts(p)).gems).toBe(-debt));
    const listed = await s.stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: jsonApiHeaders(s.stack.apiKey, p.token) });
    const gems = listed.json().data.find((c: { attributes: { code: string } }) => c.attributes.code === 'gems');
    expect(gems.meta).toEqual({ debt: debt.toFixed(2) });
    expectError(await purchase(s.stack, p, catalog['Golden Chest']!, 'gems'), 403, 'currency_in_debt');

    // The same notification again, and the same notificationUUID signed anew: applied once.
    expect(await post(refund)).toBe('duplicate');
    const uuid = JSON.parse(Buffer.from(refund.split('.')[1]!, 'base64url').toString()).notificationUUID;
    expect(await notify({ notificationType: 'REFUND', notificationUUID: uuid, signedTransactionInfo: jws })).toBe('duplicate');
    expect(await refundsOf(body.data.id)).toHaveLength(1);
    expect(await ledger(p, 'store_refund')).toEqual([{ delta: '-500.00', reference: expect.any(String) }]);
    expect((await amounts(p)).gems).toBe(-debt);

    expect(await notify({ notificationType: 'REFUND_REVERSED', signedTransactionInfo: jws })).toBe('applied');
    await eventually(async () => expect((await amounts(p)).gems).toBe(spent));
    expect((await refundsOf(body.data.id)).map((r) => r.kind)).toEqual(['refund', 'reversal']);
  });

  it("revokes a refunded pack's unopened chest and debits its coins and gems; the opened chest keeps its opening; a reversal restores the chest with its id", async () => {
    const p = await newPlayer(s);
    const start = await amounts(p);
    const { jws, body } = await buy(p, STARTER_PACK);
    const [opened, unopened] = (body.meta.grants.chests as { id: string }[]).map((c) => c.id) as [string, string];
    expect((await open(s.stack, p, opened)).statusCode).toBe(200);
    const withPack = await amounts(p);
    expect(withPack).toMatchObject({ coins: start.coins! + 1000, gems: start.gems! + 50 });

    expect(await notify({ notificationType: 'REFUND', signedTransactionInfo: jws })).toBe('applied');
    await eventually(async () => {
      expect(await inventoryIds(s, p.token)).not.toContain(unopened);
      expect(await amounts(p)).toMatchObject({ coins: start.coins, gems: start.gems });
    });
    expect(await sql(s.stack, 'SELECT 1 FROM chests.openings WHERE chest_id = $1', [opened])).toHaveLength(1);
    expectError(await open(s.stack, p, unopened), 404, 'chest_not_found');

    expect(await notify({ notificationType: 'REFUND_REVERSED', signedTransactionInfo: jws })).toBe('applied');
    await eventually(async () => {
      expect(await inventoryIds(s, p.token)).toContain(unopened);
      expect(await amounts(p)).toEqual(withPack);
    });
    expect(await sql(s.stack, 'SELECT 1 FROM chests.openings WHERE chest_id = $1', [opened])).toHaveLength(1);
  });

  it('takes back on REVOKE as on REFUND', async () => {
    const p = await newPlayer(s);
    const start = await amounts(p);
    const { jws, body } = await buy(p, GEMS_100);
    expect(await notify({ notificationType: 'REVOKE', signedTransactionInfo: jws })).toBe('applied');
    await eventually(async () => expect(await amounts(p)).toEqual(start));
    expect(await refundsOf(body.data.id)).toEqual([expect.objectContaining({ kind: 'refund', reason: 'REVOKE' })]);
  });

  it("keeps the store's order: a REFUND_REVERSED signed later but delivered before its REFUND leaves the purchase granted (the REFUND superseded)", async () => {
    const p = await newPlayer(s);
    const { jws, body } = await buy(p, GEMS_100);
    const granted = await amounts(p);
    const refundedAt = Date.now();
    const reversal = { notificationType: 'REFUND_REVERSED', signedTransactionInfo: jws, extra: { signedDate: refundedAt + 60_000 } };
    expect(await notify(reversal)).toBe('ignored');
    expect(await notify({ notificationType: 'REFUND', signedTransactionInfo: jws, extra: { signedDate: refundedAt } })).toBe('superseded');
    expect(await refundsOf(body.data.id)).toEqual([]);
    expect(await sql(s.stack, 'SELECT state FROM store.purchases WHERE id = $1', [body.data.id])).toEqual([{ state: 'granted' }]);
    expect(await amounts(p)).toEqual(granted);
    expect(await ledger(p, 'store_refund')).toEqual([]);
  });

  it('refuses a transaction whose refund came before its submission (422 receipt_revoked), granting nothing', async () => {
    const p = await newPlayer(s);
    const start = await amounts(p);
    const jws = await appleGems(s, p.id);
    expect(await notify({ notificationType: 'REFUND', signedTransactionInfo: jws })).toBe('applied');
    expectError(await submitApple(s, p.token, jws), 422, 'receipt_revoked');
    expect(await amounts(p)).toEqual(start);
    expect(await ledger(p, 'store_purchase')).toEqual([]);
    expect(await inventoryIds(s, p.token)).toEqual([p.starterChestId]);
  });

  it('grants a transaction whose refund was reversed before its submission, once', async () => {
    const p = await newPlayer(s);
    const start = await amounts(p);
    const jws = await appleGems(s, p.id, { productId: GEMS_100 });
    const refundedAt = Date.now();
    expect(await notify({ notificationType: 'REFUND', signedTransactionInfo: jws, extra: { signedDate: refundedAt } })).toBe('applied');
    expect(await notify({ notificationType: 'REFUND_REVERSED', signedTransactionInfo: jws, extra: { signedDate: refundedAt + 1000 } })).toBe(
      'applied',
    );
    const res = await submitApple(s, p.token, jws);
    expect(res.statusCode, res.body).toBe(201);
    expect(await amounts(p)).toEqual({ ...start, gems: start.gems! + 100 });
    expect(await refundsOf(res.json().data.id)).toEqual([]);
    expect((await submitApple(s, p.token, jws)).statusCode).toBe(200);
    expect(await ledger(p, 'store_purchase')).toHaveLength(1);
  });

  it('never leaves a grant without its claw-back when a refund races the submission of its transaction (10 rounds)', async () => {
    const p = await newPlayer(s);
    const start = await amounts(p);
    let granted = 0;
    for (let round = 0; round < 10; round++) {
      const jws = await appleGems(s, p.id, { productId: STARTER_PACK });
      const refund = await s.pki.signNotification({ notificationType: 'REFUND', signedTransactionInfo: jws });
      const [submitted, outcome] = await Promise.all([submitApple(s, p.token, jws), post(refund)]);
      expect(outcome).toBe('applied');
      if (submitted.statusCode === 201) {
        // Granted then clawed: one credit per currency, one refund taking them back, both chests revoked.
        granted++;
        const id = submitted.json().data.id;
        const chests = (submitted.json().meta.grants.chests as { id: string }[]).map((c) => c.id);
        expect(await refundsOf(id)).toEqual([expect.objectContaining({ kind: 'refund' })]);
        await eventually(async () => {
          expect(await amounts(p)).toEqual(start);
          const ids = await inventoryIds(s, p.token);
          for (const c of chests) expect(ids).not.toContain(c);
        }, 20_000);
      } else {
        // Refused as revoked: nothing granted.
        expectError(submitted, 422, 'receipt_revoked');
        expect(await amounts(p)).toEqual(start);
      }
      expect(await ledger(p, 'store_purchase')).toHaveLength(2 * granted);
      expect(await ledger(p, 'store_refund')).toHaveLength(2 * granted);
    }
    expect(await inventoryIds(s, p.token)).toEqual([p.starterChestId]);
  });

  it('acknowledges other notification types (TEST, CONSUMPTION_REQUEST) and changes nothing', async () => {
    const p = await newPlayer(s);
    const { jws, body } = await buy(p, GEMS_100);
    const granted = await amounts(p);
    expect(await notify({ notificationType: 'TEST', extra: { data: { bundleId: 'com.example.chests', environment: 'Sandbox' } } })).toBe('ignored');
    expect(await notify({ notificationType: 'CONSUMPTION_REQUEST', signedTransactionInfo: jws })).toBe('ignored');
    expect(await refundsOf(body.data.id)).toEqual([]);
    expect(await amounts(p)).toEqual(granted);
  });

  it('answers 404 for an app it does not know and 400 for a malformed app id, changing nothing', async () => {
    const p = await newPlayer(s);
    const { jws, body } = await buy(p, GEMS_100);
    const refund = await s.pki.signNotification({ notificationType: 'REFUND', signedTransactionInfo: jws });
    expectError(await postAppleNotification(s, refund, randomUUID()), 404, 'app_not_found');
    expectError(await postAppleNotification(s, refund, 'not-a-uuid'), 400);
    expect(await refundsOf(body.data.id)).toEqual([]);
    // The notification was not taken: sent to the right app, it applies.
    expect(await post(refund)).toBe('applied');
  });

  it('sends store.purchase_verified and store.refunded once each, with their documented data, to an endpoint that takes them', async () => {
    const p = await newPlayer(s);
    const { jws, body } = await buy(p, STARTER_PACK);
    const purchaseId: string = body.data.id;
    const refund = await s.pki.signNotification({ notificationType: 'REFUND', signedTransactionInfo: jws });
    expect(await post(refund)).toBe('applied');
    // Again: a replayed submission and a redelivered notification send nothing more.
    expect((await submitApple(s, p.token, jws)).statusCode).toBe(200);
    expect(await post(refund)).toBe('duplicate');
    // A later purchase of another player: once its event is in, those before it are too.
    const marker = await buy(await newPlayer(s), GEMS_100);
    const of = (type: string, id: string): Received[] =>
      receiver.accepted('/store').filter((r) => r.body.type === type && r.body.data.purchase_id === id);
    await eventually(async () => expect(of('store.purchase_verified', marker.body.data.id)).toHaveLength(1), 20_000);
    await eventually(async () => {
      expect(of('store.purchase_verified', purchaseId)).toHaveLength(1);
      expect(of('store.refunded', purchaseId)).toHaveLength(1);
    }, 20_000);
    const [verified] = of('store.purchase_verified', purchaseId);
    const [refunded] = of('store.refunded', purchaseId);
    const [refundRow] = await refundsOf(purchaseId);
    const transactionId = body.data.attributes.transaction_id;
    const chests = (body.meta.grants.chests as { id: string }[]).map((c) => c.id);
    for (const r of [verified!, refunded!]) {
      expect(EVENT_DATA[r.body.type as 'store.refunded'].safeParse(r.body.data).success, r.raw).toBe(true);
      expect(verifyWebhook(webhookSecret, String(r.headers['ccs-signature']), r.raw).ok).toBe(true);
      expect(r.body.app_id).toBe(s.appId);
    }
    // Amounts as every event writes them: decimal strings with two places.
    expect(verified!.body.data).toEqual({
      player_id: p.id,
      purchase_id: purchaseId,
      platform: 'apple',
      transaction_id: transactionId,
      product_id: 'starter-pack',
      quantity: 1,
      price: { amount: '4.99', currency: 'USD' },
      grants: {
        currencies: expect.arrayContaining([
          { currency: 'coins', amount: '1000.00' },
          { currency: 'gems', amount: '50.00' },
        ]),
        chests: chests.map((id) => ({ id, chest_type_id: catalog['Silver Chest'] })),
      },
      verified_at: expect.any(String),
    });
    expect(refunded!.body.data).toEqual({
      player_id: p.id,
      purchase_id: purchaseId,
      refund_id: refundRow!.id,
      platform: 'apple',
      transaction_id: transactionId,
      product_id: 'starter-pack',
      kind: 'refund',
      reason: 'REFUND',
      policy: 'revoke_then_debt',
      currencies: expect.arrayContaining([
        { currency: 'coins', amount: '1000.00' },
        { currency: 'gems', amount: '50.00' },
      ]),
      chest_ids: expect.arrayContaining(chests),
      refunded_at: expect.any(String),
    });
    // Only the two types the endpoint takes.
    expect(new Set(receiver.accepted('/store').map((r) => r.body.type))).toEqual(new Set(['store.purchase_verified', 'store.refunded']));
  });
});
