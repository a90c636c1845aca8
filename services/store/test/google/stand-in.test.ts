import { importPKCS8, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoogleStandIn, generateServiceAccountKey, type ServiceAccountKeyFile } from '../../../../test/support/store/google-stand-in.js';

const PKG = 'com.example.chests';
const SCOPE = 'https://www.googleapis.com/auth/androidpublisher';

/**
 * The stand-in must refuse what Google refuses, or the client's tests prove nothing: these
 * requests are built by hand (not by the store's code) and sent straight to it.
 */
describe('the Google stand-in as a protocol peer', () => {
  const google = new GoogleStandIn();
  let file: ServiceAccountKeyFile;
  let other: ServiceAccountKeyFile;

  async function assertion(
    claims: Record<string, unknown>,
    opts: { key?: ServiceAccountKeyFile; kid?: string; lifetime?: number; iat?: number; aud?: string } = {},
  ) {
    const key = opts.key ?? file;
    const iat = opts.iat ?? Math.floor(Date.now() / 1000);
    return new SignJWT({ scope: SCOPE, ...claims })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: opts.kid ?? key.private_key_id })
      .setIssuer(file.client_email)
      .setAudience(opts.aud ?? google.tokenUrl)
      .setIssuedAt(iat)
      .setExpirationTime(iat + (opts.lifetime ?? 3600))
      .sign(await importPKCS8(key.private_key, 'RS256'));
  }

  async function grant(jwt: string, grantType = 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
    const res = await fetch(google.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: grantType, assertion: jwt }).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function get(path: string, token?: string) {
    const res = await fetch(`${google.apiUrl}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: res.status, body: (await res.json()) as { error?: { status?: string } } };
  }

  beforeAll(async () => {
    await google.start();
    [file, other] = await Promise.all([generateServiceAccountKey(), generateServiceAccountKey()]);
    google.registerServiceAccount(file, [PKG]);
    google.addPurchase({ packageName: PKG, productId: 'gems_100', token: 'tok-1', orderId: 'GPA.1111-2222-3333-44444' });
  });
  afterAll(() => google.stop());

  it('issues an access token for a good assertion, and the API answers with it', async () => {
    const { status, body } = await grant(await assertion({}));
    expect(status).toBe(200);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3599, access_token: expect.any(String) });
    const purchase = await get(`/androidpublisher/v3/applications/${PKG}/purchases/products/gems_100/tokens/tok-1`, body.access_token as string);
    expect(purchase.status).toBe(200);
    expect(purchase.body).toMatchObject({ kind: 'androidpublisher#productPurchase', purchaseState: 0, orderId: 'GPA.1111-2222-3333-44444' });
  });

  it('refuses a bad grant type, a bad signature, an unknown key id, an expired or over-long assertion, another audience, alg none', async () => {
    const good = await assertion({});
    expect(await grant(good, 'client_credentials')).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } });
    expect(await grant(await assertion({}, { key: other, kid: file.private_key_id }))).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect(await grant(await assertion({}, { kid: 'not-a-key-id' }))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const hourAgo = Math.floor(Date.now() / 1000) - 7200;
    expect(await grant(await assertion({}, { iat: hourAgo }))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await grant(await assertion({}, { lifetime: 3601 }))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await grant(await assertion({}, { aud: 'https://oauth2.googleapis.com/token' }))).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    const [, payload] = good.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    expect(await grant(none)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await grant('garbage')).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('answers 401 without an access token it issued, 403 for a token without the scope, 404 for an unknown purchase', async () => {
    const path = `/androidpublisher/v3/applications/${PKG}/purchases/products/gems_100/tokens/tok-1`;
    expect((await get(path)).status).toBe(401);
    expect(await get(path, 'ya29.forged')).toMatchObject({ status: 401, body: { error: { status: 'UNAUTHENTICATED' } } });
    const unscoped = await grant(await assertion({ scope: 'https://www.googleapis.com/auth/cloud-platform' }));
    expect(await get(path, unscoped.body.access_token as string)).toMatchObject({ status: 403, body: { error: { status: 'PERMISSION_DENIED' } } });
    const { body } = await grant(await assertion({}));
    const token = body.access_token as string;
    expect((await get(`/androidpublisher/v3/applications/${PKG}/purchases/products/gems_100/tokens/unknown`, token)).status).toBe(404);
    expect((await get(`/androidpublisher/v3/applications/${PKG}/orders/GPA.1111-2222-3333-44444`, token)).status).toBe(200);
    expect((await get(`/androidpublisher/v3/applications/${PKG}/orders/GPA.0`, token)).status).toBe(404);
    google.expireAccessTokens();
    expect((await get(path, token)).status).toBe(401);
  });
});
