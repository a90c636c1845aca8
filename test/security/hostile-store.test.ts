import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp } from '@ccs/shared';
import { expectJsonApi } from '../support/jsonapi-schema.js';
import { registerThroughGateway, type RegisteredPlayer } from '../support/register.js';
import { appleTransaction } from '../support/store/apple-pki.js';
import {
  appleGems,
  balances,
  googleGems,
  inventoryIds,
  newPlayer,
  PUSH_ACCOUNT,
  PUSH_AUDIENCE,
  PACKAGE,
  postAppleNotification,
  postGooglePush,
  startStoreStack,
  storeContent,
  submitApple,
  submitGoogle,
  type StoreStack,
} from '../support/store/store-stack.js';
import { voidedPurchaseNotification } from '../support/store/google-stand-in.js';

// Any player, any app and any caller of the stores' notification URLs may be hostile: what they
// send (the signed transaction, a token, a product id, a notification) is input. Each attack
// below is refused with its code, grants nothing and charges nothing, and is never a 500.
// Through the gateway, against the real services and a local stand-in of Google.

let s: StoreStack;
let victim: RegisteredPlayer;

/** Everything a refusal must leave as it was: the player's balances, inventory and store purchases. */
async function holdings(p: RegisteredPlayer) {
  const purchases = await s.stack.services.store!.deps.pool.query('SELECT count(*)::int AS n FROM purchases WHERE player_id = $1', [p.id]);
  return { balances: await balances(s, p.token), inventory: (await inventoryIds(s, p.token)).sort(), purchases: purchases.rows[0].n as number };
}

/** A refusal: its status and code, a JSON:API error document, and nothing changed for the player. */
async function expectRefused(
  p: RegisteredPlayer,
  attempt: () => Promise<{ statusCode: number; body: string; json(): unknown }>,
  status: number,
  code: string,
) {
  const before = await holdings(p);
  const res = await attempt();
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as { errors: { code: string }[] };
  expectJsonApi(body);
  expect(body.errors[0]!.code).toBe(code);
  expect(await holdings(p)).toEqual(before);
}

beforeAll(async () => {
  s = await startStoreStack();
  victim = await newPlayer(s);
});
afterAll(async () => s?.close());

describe('hostile App Store transactions', () => {
  const gems = (overrides = {}) => appleTransaction({ productId: 'com.example.chests.gems_500', appAccountToken: victim.id, ...overrides });

  it('refuses a self-signed leaf, a re-signed JWS, a chain to an untrusted root, an expired leaf and alg none', async () => {
    const selfSigned = await (await s.pki.variant({ selfSignedLeaf: true })).sign(gems());
    const expired = await (await s.pki.variant({ expiredLeaf: true })).sign(gems());
    const attacks = [
      selfSigned,
      await s.pki.hostile.resignedByOtherKey(gems()),
      await s.pki.hostile.untrustedRoot(gems()),
      expired,
      await s.pki.hostile.algNone(gems()),
      await s.pki.hostile.hmacWithLeafKey(gems()),
      await s.pki.hostile.jwkOnly(gems()),
    ];
    for (const jws of attacks) await expectRefused(victim, () => submitApple(s, victim.token, jws), 422, 'receipt_invalid');
  });

  it('refuses a JWS whose payload was edited after signing (a price of 0.99 turned into ten thousand gems)', async () => {
    const signed = gems({ productId: 'com.example.chests.gems_100' });
    const jws = await s.pki.hostile.editedAfterSigning(signed, { ...signed, productId: 'com.example.chests.gems_500', quantity: 20 });
    await expectRefused(victim, () => submitApple(s, victim.token, jws), 422, 'receipt_invalid');
  });

  it("refuses another app's bundle id, a sandbox receipt in a production app, a revoked transaction and a product that does not exist", async () => {
    await expectRefused(
      victim,
      async () => submitApple(s, victim.token, await appleGems(s, victim.id, { bundleId: 'com.rival.game' })),
      422,
      'receipt_wrong_app',
    );
    await expectRefused(
      victim,
      async () => submitApple(s, victim.token, await appleGems(s, victim.id, { revocationDate: Date.now() - 1000, revocationReason: 0 })),
      422,
      'receipt_revoked',
    );
    await expectRefused(
      victim,
      async () => submitApple(s, victim.token, await appleGems(s, victim.id, { productId: 'com.example.chests.gems_999999' })),
      422,
      'unknown_product',
    );
    // A production app: the same (sandbox) receipt is refused there.
    const prod = await s.stack.bus.request(
      AdminCreateApp,
      { name: `Production ${randomUUID().slice(0, 6)}`, content: storeContent((c) => (c.store!.apple!.environment = 'Production')) },
      { requestId: randomUUID() },
    );
    const player = await registerThroughGateway(s.stack, prod.publishableKey);
    const jws = await appleGems(s, player.id);
    const res = await submitApple(s, player.token, jws, prod.publishableKey);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().errors[0].code).toBe('receipt_wrong_environment');
  });

  it("refuses a receipt replayed by a second player: one bound to the first player's id, and one bound to nobody", async () => {
    const first = await newPlayer(s);
    const bound = await appleGems(s, first.id);
    const unbound = await s.pki.signTransaction({ productId: 'com.example.chests.gems_500', appAccountToken: undefined });
    expect((await submitApple(s, first.token, bound)).statusCode).toBe(201);
    expect((await submitApple(s, first.token, unbound)).statusCode).toBe(201);
    await expectRefused(victim, () => submitApple(s, victim.token, bound), 422, 'receipt_wrong_player');
    await expectRefused(victim, () => submitApple(s, victim.token, unbound), 409, 'transaction_claimed');
  });

  it('refuses a body over 64 KiB with 413 and a 10 MB one too, and never reads it', async () => {
    for (const size of [70 * 1024, 10 * 1024 * 1024]) {
      await expectRefused(victim, () => submitApple(s, victim.token, 'x'.repeat(size)), 413, 'payload_too_large');
    }
  });
});

describe('hostile notifications', () => {
  it('refuses an App Store notification with a forged signature (401) and changes nothing', async () => {
    const p = await newPlayer(s);
    const jws = await appleGems(s, p.id);
    expect((await submitApple(s, p.token, jws)).statusCode).toBe(201);
    const payload = {
      notificationType: 'REFUND',
      notificationUUID: randomUUID(),
      signedDate: Date.now(),
      data: { bundleId: 'com.example.chests', environment: 'Sandbox', signedTransactionInfo: jws },
    };
    for (const forged of [
      await s.pki.hostile.resignedByOtherKey(payload),
      await s.pki.hostile.untrustedRoot(payload),
      await s.pki.hostile.algNone(payload),
    ]) {
      await expectRefused(p, () => postAppleNotification(s, forged), 401, 'notification_invalid');
    }
  });

  it('refuses a Pub/Sub push without a token or with a wrong one (401) and changes nothing', async () => {
    const p = await newPlayer(s);
    const bought = googleGems(s, p.id);
    expect((await submitGoogle(s, p.token, 'gems_500', bought.token)).statusCode).toBe(201);
    const voided = voidedPurchaseNotification({ packageName: PACKAGE, purchaseToken: bought.token, orderId: bought.orderId! });
    const good = s.google.push({ audience: PUSH_AUDIENCE, email: PUSH_ACCOUNT }, voided);
    await expectRefused(p, () => postGooglePush(s, good.body), 401, 'notification_invalid');
    for (const spec of [
      { audience: 'https://attacker.example/push', email: PUSH_ACCOUNT },
      { audience: PUSH_AUDIENCE, email: 'attacker@evil.iam.gserviceaccount.com' },
      { audience: PUSH_AUDIENCE, email: PUSH_ACCOUNT, signer: 'stranger' as const },
      { audience: PUSH_AUDIENCE, email: PUSH_ACCOUNT, signer: 'none' as const },
      { audience: PUSH_AUDIENCE, email: PUSH_ACCOUNT, expiresInSeconds: -600 },
    ]) {
      const forged = s.google.push(spec, voided);
      await expectRefused(p, () => postGooglePush(s, forged.body, forged.authorization), 401, 'notification_invalid');
    }
  });
});

describe('hostile Google Play purchases', () => {
  it('refuses a product id that does not exist without calling Google, and path tricks in the token', async () => {
    const calls = s.google.counts.purchase;
    await expectRefused(victim, () => submitGoogle(s, victim.token, 'gems_999999', 'tok'), 422, 'unknown_product');
    expect(s.google.counts.purchase).toBe(calls);
    for (const token of ['../../orders/GPA.1', 'a/b?c#d', '%2e%2e']) {
      await expectRefused(victim, () => submitGoogle(s, victim.token, 'gems_500', token), 422, 'receipt_invalid');
    }
  });
});
