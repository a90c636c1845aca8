import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AppleNotificationSchema,
  AppleTransactionSchema,
  appleMilliunitsToDecimal,
  createAppleTrust,
  verifyAppleJws,
  type AppleTrust,
} from '../../src/apple/index.js';
import { appleNotification, appleTransaction, applePki, type ApplePki } from '../../../../test/support/store/apple-pki.js';

/** The decoded payloads' schemas, and Apple's milliunit prices as decimal strings. */
describe('store: App Store payloads', () => {
  let pki: ApplePki;
  let trust: AppleTrust;

  beforeAll(async () => {
    pki = await applePki();
    trust = createAppleTrust({ extraRoots: pki.rootPem });
  });

  it('reads a signed notification and the transaction it carries, each verified on its own', async () => {
    const player = randomUUID();
    const signedTransactionInfo = await pki.signTransaction({ appAccountToken: player, revocationDate: Date.now(), revocationReason: 1 });
    const notificationUUID = randomUUID();
    const { payload } = await verifyAppleJws(await pki.signNotification({ notificationUUID, signedTransactionInfo }), trust);
    const notification = AppleNotificationSchema.parse(payload);
    expect(notification).toMatchObject({
      notificationType: 'REFUND',
      notificationUUID,
      data: { bundleId: 'com.example.chests', environment: 'Sandbox' },
    });
    const transaction = AppleTransactionSchema.parse((await verifyAppleJws(notification.data!.signedTransactionInfo!, trust)).payload);
    expect(transaction).toMatchObject({ appAccountToken: player, type: 'Consumable', quantity: 1, price: 990, currency: 'USD', revocationReason: 1 });
  });

  it('accepts fields it does not read, and reads UUIDs in lowercase', () => {
    const token = randomUUID().toUpperCase();
    const parsed = AppleTransactionSchema.parse({
      ...appleTransaction({ appAccountToken: token }),
      offerDiscountType: 'FREE_TRIAL',
      somethingNew: { a: 1 },
    });
    expect(parsed.appAccountToken).toBe(token.toLowerCase());
    expect(parsed).not.toHaveProperty('somethingNew');
    expect(AppleTransactionSchema.parse(appleTransaction({ appAccountToken: '' })).appAccountToken).toBeUndefined();
    const withoutPrice = appleTransaction();
    delete withoutPrice.price;
    delete withoutPrice.currency;
    expect(AppleTransactionSchema.safeParse(withoutPrice).success).toBe(true);
  });

  it('refuses a transaction without the fields the service relies on, or with them malformed', () => {
    const base = appleTransaction();
    const bad: [string, Record<string, unknown>][] = [
      ['no transactionId', { ...base, transactionId: undefined }],
      ['empty transactionId', { ...base, transactionId: '' }],
      ['transactionId with spaces', { ...base, transactionId: '1 2' }],
      ['no bundleId', { ...base, bundleId: undefined }],
      ['no productId', { ...base, productId: undefined }],
      ['quantity 0', { ...base, quantity: 0 }],
      ['quantity 1.5', { ...base, quantity: 1.5 }],
      ['purchaseDate as text', { ...base, purchaseDate: '2024-01-01' }],
      ['no signedDate', { ...base, signedDate: undefined }],
      ['no environment', { ...base, environment: undefined }],
      ['appAccountToken not a UUID', { ...base, appAccountToken: 'player-1' }],
      ['price in units', { ...base, price: 9.9 }],
      ['negative price', { ...base, price: -990 }],
      ['price without currency', { ...base, currency: undefined }],
      ['currency in lowercase', { ...base, currency: 'usd' }],
      ['storefront of two letters', { ...base, storefront: 'US' }],
      ['revocationDate as text', { ...base, revocationDate: 'yesterday' }],
    ];
    for (const [name, payload] of bad) expect(AppleTransactionSchema.safeParse(payload).success, name).toBe(false);
  });

  it('reads notifications of any type, and requires the transaction of a refund, revocation or reversal', () => {
    const jws = 'e30.e30.sig';
    expect(AppleNotificationSchema.parse(appleNotification({ notificationType: 'REVOKE', signedTransactionInfo: jws })).notificationType).toBe(
      'REVOKE',
    );
    const test = { ...appleNotification({ notificationType: 'TEST', signedTransactionInfo: jws }), data: undefined };
    expect(AppleNotificationSchema.safeParse(test).success).toBe(true);
    const newType = appleNotification({ notificationType: 'SOMETHING_NEW', subtype: 'ANOTHER', signedTransactionInfo: jws });
    expect(AppleNotificationSchema.safeParse(newType).success).toBe(true);
    for (const type of ['REFUND', 'REVOKE', 'REFUND_REVERSED']) {
      const withoutData = { ...appleNotification({ notificationType: type, signedTransactionInfo: jws }), data: undefined };
      expect(AppleNotificationSchema.safeParse(withoutData).success, type).toBe(false);
      const withoutTransaction = appleNotification({ notificationType: type, signedTransactionInfo: jws });
      delete (withoutTransaction.data as Record<string, unknown>).signedTransactionInfo;
      expect(AppleNotificationSchema.safeParse(withoutTransaction).success, type).toBe(false);
    }
    expect(AppleNotificationSchema.safeParse({ ...appleNotification({ signedTransactionInfo: jws }), notificationUUID: 'n-1' }).success).toBe(false);
    expect(AppleNotificationSchema.safeParse({ ...appleNotification({ signedTransactionInfo: jws }), notificationType: 'refund' }).success).toBe(
      false,
    );
    const noBundle = appleNotification({ signedTransactionInfo: jws });
    delete (noBundle.data as Record<string, unknown>).bundleId;
    expect(AppleNotificationSchema.safeParse(noBundle).success).toBe(false);
  });

  it("converts Apple's milliunit prices to decimal strings", () => {
    const cases: [number, string][] = [
      [990, '0.99'],
      [12990, '12.99'],
      [1000, '1'],
      [5, '0.005'],
      [0, '0'],
      [1_234_567, '1234.567'],
      [100_000_010, '100000.01'],
      [Number.MAX_SAFE_INTEGER, '9007199254740.991'],
    ];
    for (const [milliunits, decimal] of cases) expect(appleMilliunitsToDecimal(milliunits), String(milliunits)).toBe(decimal);
    for (const bad of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1])
      expect(() => appleMilliunitsToDecimal(bad), String(bad)).toThrow(RangeError);
  });
});
