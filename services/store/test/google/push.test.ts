import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GoogleStandIn, testNotification, voidedPurchaseNotification } from '../../../../test/support/store/google-stand-in.js';
import { decodePushBody } from '../../src/google/notifications.js';
import { PushVerifier, type PushVerdict } from '../../src/google/push-auth.js';

const AUDIENCE = 'https://api.example.test/api/v1/stores/google/notifications/app-1';
const EMAIL = 'rtdn-push@ccs-test.iam.gserviceaccount.com';
const expected = { audience: AUDIENCE, serviceAccountEmail: EMAIL };

function refusal(v: PushVerdict) {
  if (v.ok) throw new Error('the push was accepted');
  return v.refusal;
}

describe('Pub/Sub push authentication (OIDC token), against the Google stand-in', () => {
  const google = new GoogleStandIn();
  let verifier: PushVerifier;

  beforeAll(async () => {
    await google.start();
    verifier = new PushVerifier({ jwksUrl: google.jwksUrl, timeoutMs: 5000 });
  });
  afterEach(() => google.heal());
  afterAll(() => google.stop());

  it('accepts a push signed with Google key for the expected audience and service account, fetching the keys once', async () => {
    const before = google.counts.jwks;
    for (const issuer of ['https://accounts.google.com', 'accounts.google.com']) {
      const verdict = await verifier.verify(`Bearer ${google.pushToken({ audience: AUDIENCE, email: EMAIL, issuer })}`, expected);
      expect(verdict.ok).toBe(true);
      expect(verdict.ok && verdict.claims).toMatchObject({ email: EMAIL, email_verified: true, aud: AUDIENCE, iss: issuer });
    }
    expect((await verifier.verify(`bearer ${google.pushToken({ audience: AUDIENCE, email: EMAIL })}`, expected)).ok).toBe(true);
    expect(google.counts.jwks - before).toBe(1);
  });

  it('refuses a push without a bearer token as missing', async () => {
    expect(refusal(await verifier.verify(undefined, expected)).reason).toBe('missing');
    expect(refusal(await verifier.verify('', expected)).reason).toBe('missing');
    expect(refusal(await verifier.verify('   ', expected)).reason).toBe('missing');
    expect(refusal(await verifier.verify('Basic dXNlcjpwYXNz', expected)).reason).toBe('invalid');
    expect(refusal(await verifier.verify('Bearer not.a.jwt', expected)).reason).toBe('invalid');
  });

  it('refuses a wrong audience, a wrong email, an unverified email, a wrong issuer and an expired token', async () => {
    const cases = [
      { audience: 'https://api.example.test/api/v1/stores/google/notifications/app-2', email: EMAIL },
      { audience: AUDIENCE, email: 'someone-else@ccs-test.iam.gserviceaccount.com' },
      { audience: AUDIENCE, email: EMAIL, emailVerified: false },
      { audience: AUDIENCE, email: EMAIL, issuer: 'https://evil.example' },
      { audience: AUDIENCE, email: EMAIL, expiresInSeconds: -3600 },
    ];
    for (const spec of cases) expect(refusal(await verifier.verify(`Bearer ${google.pushToken(spec)}`, expected)).reason).toBe('invalid');
  });

  it('refuses a token signed by a key Google never published, and an unsigned one (alg none)', async () => {
    const stranger = google.pushToken({ audience: AUDIENCE, email: EMAIL, signer: 'stranger' });
    expect(refusal(await verifier.verify(`Bearer ${stranger}`, expected)).reason).toBe('invalid');
    const unsigned = google.pushToken({ audience: AUDIENCE, email: EMAIL, signer: 'none' });
    expect(refusal(await verifier.verify(`Bearer ${unsigned}`, expected)).reason).toBe('invalid');
    // The good token, re-signed as nothing: same claims, signature stripped.
    const good = google.pushToken({ audience: AUDIENCE, email: EMAIL });
    const [, payload] = good.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    expect(refusal(await verifier.verify(`Bearer ${none}`, expected)).reason).toBe('invalid');
  });

  it('reports unavailable, not invalid, when Google keys cannot be fetched', async () => {
    const token = google.pushToken({ audience: AUDIENCE, email: EMAIL });
    google.down({ status: 503 }, ['jwks']);
    const cold = new PushVerifier({ jwksUrl: google.jwksUrl, timeoutMs: 5000 });
    expect(refusal(await cold.verify(`Bearer ${token}`, expected)).reason).toBe('unavailable');
    google.hold(['jwks']);
    const held = new PushVerifier({ jwksUrl: google.jwksUrl, timeoutMs: 200 });
    expect(refusal(await held.verify(`Bearer ${token}`, expected))).toMatchObject({
      reason: 'unavailable',
      detail: expect.stringMatching(/in time/),
    });
    google.heal();
    expect((await held.verify(`Bearer ${token}`, expected)).ok).toBe(true);
  });
});

describe('Pub/Sub push bodies (real-time developer notifications)', () => {
  const google = new GoogleStandIn();
  beforeAll(() => google.start());
  afterAll(() => google.stop());

  it('decodes a voided purchase notification', () => {
    const body = google.pushBody(
      voidedPurchaseNotification({ packageName: 'com.example.chests', purchaseToken: 'tok-1', orderId: 'GPA.1234-5678-9012-34567' }),
      {
        messageId: '136969346945',
        attributes: { origin: 'test' },
      },
    );
    const decoded = decodePushBody(body);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(decoded.notification).toMatchObject({
      messageId: '136969346945',
      subscription: 'projects/ccs-test/subscriptions/play-rtdn',
      version: '1.0',
      packageName: 'com.example.chests',
      event: { kind: 'voided_purchase', purchaseToken: 'tok-1', orderId: 'GPA.1234-5678-9012-34567', productType: 2, refundType: 1 },
    });
    expect(decoded.notification.eventTimeMillis).toBeGreaterThan(1_600_000_000_000);
    expect(decoded.notification.publishTime).toEqual(body.message.publishTime);
  });

  it('decodes a test notification, a one-time product one, and a kind it does not know as other', () => {
    expect(decodePushBody(google.pushBody(testNotification('com.example.chests')))).toMatchObject({
      ok: true,
      notification: { event: { kind: 'test' } },
    });
    const oneTime = {
      version: '1.0',
      packageName: 'p',
      eventTimeMillis: 1,
      oneTimeProductNotification: { version: '1.0', notificationType: 1, purchaseToken: 't', sku: 'gems' },
    };
    expect(decodePushBody(google.pushBody(oneTime))).toMatchObject({
      ok: true,
      notification: { event: { kind: 'one_time_product', notificationType: 1, sku: 'gems' } },
    });
    const future = { version: '1.0', packageName: 'p', eventTimeMillis: '1', someFutureNotification: { x: 1 } };
    expect(decodePushBody(google.pushBody(future))).toMatchObject({ ok: true, notification: { event: { kind: 'other' } } });
  });

  it('refuses a body that is not a push, data that is not base64 or not JSON, and a notification that is not one', () => {
    const good = google.pushBody(testNotification('p'));
    const reason = (body: unknown) => {
      const d = decodePushBody(body);
      return d.ok ? 'accepted' : d.error.reason;
    };
    expect(reason(null)).toBe('bad_push');
    expect(reason({ message: { data: good.message.data } })).toBe('bad_push');
    expect(reason({ ...good, message: { ...good.message, data: '***not base64***' } })).toBe('bad_base64');
    expect(reason({ ...good, message: { ...good.message, data: 'abc' } })).toBe('bad_base64');
    expect(reason({ ...good, message: { ...good.message, data: Buffer.from('{not json').toString('base64') } })).toBe('bad_json');
    expect(reason(google.pushBody({ packageName: 'p', eventTimeMillis: 1, testNotification: {} }))).toBe('bad_notification');
    expect(reason(google.pushBody({ version: '1.0', packageName: 'p', eventTimeMillis: 'yesterday', testNotification: {} }))).toBe(
      'bad_notification',
    );
    expect(
      reason(google.pushBody({ version: '1.0', packageName: 'p', eventTimeMillis: 1, voidedPurchaseNotification: { purchaseToken: 't' } })),
    ).toBe('bad_notification');
    const two = {
      version: '1.0',
      packageName: 'p',
      eventTimeMillis: 1,
      testNotification: {},
      voidedPurchaseNotification: { purchaseToken: 't', orderId: 'o' },
    };
    expect(reason(google.pushBody(two))).toBe('bad_notification');
  });
});
