import { X509Certificate } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppleJwsError, AppleTrust, createAppleTrust, loadShippedAppleRoot, verifyAppleJws, type AppleJwsRefusal } from '../../src/apple/index.js';
import { appleTransaction, applePki, type ApplePki } from '../../../../test/support/store/apple-pki.js';

/**
 * App Store JWS verification against the test certificate authority (shaped like Apple's: P-384
 * root and intermediate, P-256 leaf, Apple's OIDs): what verifies, and each refusal's reason.
 */
describe('store: verifyAppleJws', () => {
  let pki: ApplePki;
  let trust: AppleTrust;

  beforeAll(async () => {
    pki = await applePki();
    trust = createAppleTrust({ extraRoots: pki.rootPem });
  });

  const refusal = async (jws: string, t: AppleTrust = trust, now?: Date): Promise<AppleJwsRefusal> => {
    const err: unknown = await verifyAppleJws(jws, t, now).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'the JWS was accepted').toBeInstanceOf(AppleJwsError);
    return (err as AppleJwsError).reason;
  };

  it('verifies a transaction the test authority signed and returns its payload and header', async () => {
    const payload = appleTransaction({ productId: 'gems_500', price: 4990 });
    const { payload: decoded, header } = await verifyAppleJws(await pki.chain.sign(payload), trust);
    expect(decoded).toEqual(payload);
    expect(header.alg).toBe('ES256');
    expect(header.x5c).toEqual(pki.chain.x5c);
  });

  it('verifies a chain sent without its root (x5c of two)', async () => {
    const payload = appleTransaction();
    const jws = await pki.chain.sign(payload, { x5c: pki.chain.x5c.slice(0, 2) });
    expect((await verifyAppleJws(jws, trust)).payload).toEqual(payload);
  });

  it('refuses alg none and an HMAC keyed with the leaf public key: algorithm', async () => {
    expect(await refusal(await pki.hostile.algNone(appleTransaction()))).toBe('algorithm');
    expect(await refusal(await pki.hostile.hmacWithLeafKey(appleTransaction()))).toBe('algorithm');
  });

  it('refuses any alg other than ES256 before looking at the chain', async () => {
    const good = await pki.chain.sign(appleTransaction());
    const [, payload, signature] = good.split('.');
    for (const alg of ['ES384', 'RS256', 'HS256', 'PS256', 'es256', 'EdDSA']) {
      const header = Buffer.from(JSON.stringify({ alg, x5c: pki.chain.x5c })).toString('base64url');
      expect(await refusal(`${header}.${payload}.${signature}`), alg).toBe('algorithm');
    }
    const noAlg = Buffer.from(JSON.stringify({ x5c: pki.chain.x5c })).toString('base64url');
    expect(await refusal(`${noAlg}.${payload}.${signature}`)).toBe('algorithm');
  });

  it('refuses a payload edited after signing: signature', async () => {
    const payload = appleTransaction({ quantity: 1 });
    expect(await refusal(await pki.hostile.editedAfterSigning(payload, { ...payload, quantity: 100 }))).toBe('signature');
  });

  it('refuses a JWS signed by another key under the valid chain: signature', async () => {
    expect(await refusal(await pki.hostile.resignedByOtherKey(appleTransaction()))).toBe('signature');
  });

  it('checks the signature on every call, after the chain was verified and cached', async () => {
    const payload = appleTransaction();
    await verifyAppleJws(await pki.chain.sign(payload), trust);
    expect(await refusal(await pki.hostile.editedAfterSigning(payload, { ...payload, productId: 'gems_10000' }))).toBe('signature');
    expect(await refusal(await pki.hostile.resignedByOtherKey(payload))).toBe('signature');
  });

  it('refuses a JWS carrying its key in a jwk header without x5c: malformed', async () => {
    expect(await refusal(await pki.hostile.jwkOnly(appleTransaction()))).toBe('malformed');
  });

  it('refuses a chain under a root that is not trusted, whether or not x5c carries that root: chain_untrusted', async () => {
    expect(await refusal(await pki.hostile.untrustedRoot(appleTransaction()))).toBe('chain_untrusted');
    const untrusted = await pki.variant({ untrustedRoot: true });
    const withoutRoot = await untrusted.sign(appleTransaction(), { x5c: untrusted.x5c.slice(0, 2) });
    expect(await refusal(withoutRoot)).toBe('chain_untrusted');
  });

  it('never trusts a root because the JWS carries it: a trusted root in x5c does not vouch for another chain', async () => {
    const untrusted = await pki.variant({ untrustedRoot: true });
    // The untrusted chain with the trusted root appended: the intermediate is not the trusted root's.
    const spliced = await untrusted.sign(appleTransaction(), { x5c: [...untrusted.x5c.slice(0, 2), pki.chain.x5c[2]!] });
    expect(await refusal(spliced)).toBe('chain_untrusted');
    // The valid chain with the untrusted root in place of its own.
    const swapped = await pki.chain.sign(appleTransaction(), { x5c: [...pki.chain.x5c.slice(0, 2), untrusted.x5c[2]!] });
    expect(await refusal(swapped)).toBe('chain_untrusted');
    // Another trusted root (Apple's) in place of the one that issued the intermediate.
    const appleRoot = loadShippedAppleRoot().toString('base64');
    const otherTrusted = await pki.chain.sign(appleTransaction(), { x5c: [...pki.chain.x5c.slice(0, 2), appleRoot] });
    expect(await refusal(otherTrusted)).toBe('chain_untrusted');
  });

  it('refuses the valid chain when its root is not in the trusted set (Apple root only): chain_untrusted', async () => {
    const appleOnly = createAppleTrust();
    expect(await refusal(await pki.signTransaction(), appleOnly)).toBe('chain_untrusted');
  });

  it('refuses a self-signed leaf and an intermediate that is not a CA: chain_untrusted', async () => {
    const selfSigned = await pki.variant({ selfSignedLeaf: true });
    expect(await refusal(await selfSigned.sign(appleTransaction()))).toBe('chain_untrusted');
    const notCa = await pki.variant({ intermediateNotCa: true });
    expect(await refusal(await notCa.sign(appleTransaction()))).toBe('chain_untrusted');
  });

  it("refuses a leaf or an intermediate without Apple's OID: certificate_oid", async () => {
    const noLeafOid = await pki.variant({ omitLeafOid: true });
    expect(await refusal(await noLeafOid.sign(appleTransaction()))).toBe('certificate_oid');
    const noIntermediateOid = await pki.variant({ omitIntermediateOid: true });
    expect(await refusal(await noIntermediateOid.sign(appleTransaction()))).toBe('certificate_oid');
  });

  it('refuses an expired leaf or intermediate, and a valid chain at an instant outside its certificates: certificate_expired', async () => {
    const expired = await pki.variant({ expiredLeaf: true });
    expect(await refusal(await expired.sign(appleTransaction()))).toBe('certificate_expired');
    const expiredIntermediate = await pki.variant({ expiredIntermediate: true });
    expect(await refusal(await expiredIntermediate.sign(appleTransaction()))).toBe('certificate_expired');
    // Validity is checked against `now` on every call, cached chain or not.
    const jws = await pki.signTransaction();
    await verifyAppleJws(jws, trust);
    expect(await refusal(jws, trust, new Date(Date.now() + 2 * 365 * 86_400_000))).toBe('certificate_expired');
    expect(await refusal(jws, trust, new Date(Date.now() - 30 * 86_400_000))).toBe('certificate_expired');
    await expect(verifyAppleJws(jws, trust, new Date(Number.NaN))).rejects.toThrow(TypeError);
  });

  it('refuses what is not a bounded compact JWS with a bounded x5c of 2 or 3 certificates: malformed', async () => {
    const good = await pki.signTransaction();
    const [, payload, signature] = good.split('.');
    const withHeader = (header: unknown) => `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${payload}.${signature}`;
    const [leaf, intermediate, root] = pki.chain.x5c;
    const cases: [string, string][] = [
      ['empty', ''],
      ['two parts', good.split('.').slice(0, 2).join('.')],
      ['four parts', `${good}.${signature}`],
      ['not base64url', good.replace('.', '.+')],
      ['too long', `${good}${'A'.repeat(32 * 1024)}`],
      ['header not JSON', `${Buffer.from('{alg').toString('base64url')}.${payload}.${signature}`],
      ['header an array', withHeader(['ES256'])],
      ['no x5c', withHeader({ alg: 'ES256', kid: 'apple' })],
      ['jku', withHeader({ alg: 'ES256', jku: 'https://attacker.example/keys' })],
      ['x5c of one', withHeader({ alg: 'ES256', x5c: [leaf] })],
      ['x5c of four', withHeader({ alg: 'ES256', x5c: [leaf, intermediate, root, root] })],
      ['x5c not a list', withHeader({ alg: 'ES256', x5c: leaf })],
      ['x5c of numbers', withHeader({ alg: 'ES256', x5c: [1, 2] })],
      ['x5c not base64', withHeader({ alg: 'ES256', x5c: [leaf, '%%%%'] })],
      ['certificate over 8 KiB', withHeader({ alg: 'ES256', x5c: [leaf, 'A'.repeat(11_000)] })],
      ['not a certificate', withHeader({ alg: 'ES256', x5c: [Buffer.from('hello, world').toString('base64'), intermediate] })],
      ['crit', withHeader({ alg: 'ES256', x5c: pki.chain.x5c, crit: ['b64'], b64: false })],
    ];
    for (const [name, jws] of cases) expect(await refusal(jws), name).toBe('malformed');
    expect(await refusal(42 as unknown as string)).toBe('malformed');
  });

  it('refuses a signed payload that is not a JSON object: malformed', async () => {
    expect(await refusal(await pki.chain.sign(['not', 'an', 'object']))).toBe('malformed');
  });

  describe('the cache of verified links', () => {
    afterEach(() => vi.restoreAllMocks());

    it('verifies the chain once: a later JWS from the same chain checks no certificate signature, only its own', async () => {
      const fresh = createAppleTrust({ extraRoots: pki.rootPem });
      const certificateChecks = vi.spyOn(X509Certificate.prototype, 'verify');
      await verifyAppleJws(await pki.signTransaction(), fresh);
      expect(certificateChecks).toHaveBeenCalledTimes(2); // intermediate by root, leaf by intermediate
      certificateChecks.mockClear();
      const payload = appleTransaction();
      expect((await verifyAppleJws(await pki.chain.sign(payload), fresh)).payload).toEqual(payload);
      expect(certificateChecks).not.toHaveBeenCalled();
      // A new leaf under the known intermediate: only its own link is checked.
      const otherLeaf = await pki.variant({ expiredLeaf: true });
      expect(await refusal(await otherLeaf.sign(appleTransaction()), fresh)).toBe('certificate_expired');
      expect(certificateChecks).toHaveBeenCalledTimes(1);
    });

    it('still refuses, from a cached chain, a foreign root in x5c, an edited payload and an instant outside the certificates', async () => {
      const fresh = createAppleTrust({ extraRoots: pki.rootPem });
      const payload = appleTransaction();
      await verifyAppleJws(await pki.chain.sign(payload), fresh);
      const untrusted = await pki.variant({ untrustedRoot: true });
      const swapped = await pki.chain.sign(appleTransaction(), { x5c: [...pki.chain.x5c.slice(0, 2), untrusted.x5c[2]!] });
      expect(await refusal(swapped, fresh)).toBe('chain_untrusted');
      expect(await refusal(await pki.hostile.editedAfterSigning(payload, { ...payload, quantity: 9 }), fresh)).toBe('signature');
      expect(await refusal(await pki.chain.sign(payload), fresh, new Date(Date.now() + 3 * 365 * 86_400_000))).toBe('certificate_expired');
      // The same chain under another trust is not taken from this one's cache.
      expect(await refusal(await pki.chain.sign(payload), createAppleTrust())).toBe('chain_untrusted');
    });
  });

  it('keeps the caches bounded, and verifies again what was evicted', async () => {
    const fresh = createAppleTrust({ extraRoots: pki.rootPem });
    const jws = await pki.signTransaction();
    await verifyAppleJws(jws, fresh);
    expect(fresh.intermediates.size).toBe(1);
    expect(fresh.leaves.size).toBe(1);
    for (let i = 0; i < 70; i++) fresh.leaves.set(`other-${i}`, fresh.roots[0]!);
    expect(fresh.leaves.size).toBe(64);
    expect((await verifyAppleJws(jws, fresh)).payload).toMatchObject({ type: 'Consumable' });
  });
});
