import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '@ccs/shared';
import {
  AppleJwsError,
  AppleTrust,
  APPLE_ROOT_CA_G3_SHA256,
  createAppleTrust,
  loadShippedAppleRoot,
  parseAppleRootCerts,
  SHIPPED_APPLE_ROOT,
  verifyAppleJws,
} from '../../src/apple/index.js';
import { appleTransaction, applePki, type ApplePki } from '../../../../test/support/store/apple-pki.js';
import { APPLE_PRODUCTION_INTERMEDIATE, APPLE_PRODUCTION_LEAF, INSIDE_LEAF_VALIDITY } from './apple-production-chain.js';

const fingerprint = (der: Buffer) =>
  createHash('sha256')
    .update(der)
    .digest('hex')
    .toUpperCase()
    .replace(/(..)(?!$)/g, '$1:');

const thrown = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('nothing was thrown');
};

describe('store: the trusted roots of App Store signatures', () => {
  let pki: ApplePki;
  let dir: string;
  const shippedPath = fileURLToPath(SHIPPED_APPLE_ROOT);

  beforeAll(async () => {
    pki = await applePki();
    dir = mkdtempSync(join(tmpdir(), 'apple-roots-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('ships Apple Root CA - G3 in services/store/assets, where src/apple and dist/apple both find it', () => {
    expect(shippedPath.endsWith(join('services', 'store', 'assets', 'AppleRootCA-G3.pem'))).toBe(true);
    const fromDist = fileURLToPath(new URL('../../assets/AppleRootCA-G3.pem', new URL('../dist/apple/roots.js', SHIPPED_APPLE_ROOT)));
    expect(fromDist).toBe(shippedPath);
    const der = loadShippedAppleRoot();
    expect(fingerprint(der)).toBe(APPLE_ROOT_CA_G3_SHA256);
    const cert = new X509Certificate(der);
    expect(cert.subject).toContain('CN=Apple Root CA - G3');
    expect(cert.ca).toBe(true);
  });

  it('refuses a shipped root whose fingerprint is not the pinned one, naming the file and both fingerprints', () => {
    const pem = readFileSync(shippedPath, 'utf8');
    // One base64 character changed inside the certificate: still a PEM block, another fingerprint.
    const lines = pem.split('\n');
    lines[5] = lines[5]!.slice(0, 10) + (lines[5]![10] === 'A' ? 'B' : 'A') + lines[5]!.slice(11);
    const tampered = join(dir, 'tampered.pem');
    writeFileSync(tampered, lines.join('\n'));
    const err = thrown(() => loadShippedAppleRoot(tampered));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toContain(tampered);
    expect(err.message).toContain(APPLE_ROOT_CA_G3_SHA256);
    expect(err.message).toMatch(/fingerprint ([0-9A-F]{2}:){31}[0-9A-F]{2}/);
    expect(() => createAppleTrust({ shippedRoot: tampered })).toThrow(ConfigError);

    // Another genuine certificate in its place is refused as well.
    const replaced = join(dir, 'replaced.pem');
    writeFileSync(replaced, pki.rootPem);
    expect(thrown(() => loadShippedAppleRoot(replaced)).message).toContain(`but Apple Root CA - G3 is pinned as ${APPLE_ROOT_CA_G3_SHA256}`);
    expect(thrown(() => loadShippedAppleRoot(join(dir, 'missing.pem'))).message).toMatch(/missing\.pem cannot be read \(ENOENT\)/);
  });

  it('reads STORE_APPLE_ROOT_CERTS: PEM text (with literal \\n), PEM and DER files, separated by commas', () => {
    const pemFile = join(dir, 'root.pem');
    writeFileSync(pemFile, pki.untrustedRootPem);
    const derFile = join(dir, 'root.cer');
    writeFileSync(derFile, new X509Certificate(pki.rootPem).raw);
    const escaped = pki.rootPem.trim().replace(/\n/g, '\\n');
    const roots = parseAppleRootCerts(` ${escaped} , ${pemFile},${derFile},`);
    expect(roots.map((r) => fingerprint(r.der))).toEqual([
      fingerprint(new X509Certificate(pki.rootPem).raw),
      fingerprint(new X509Certificate(pki.untrustedRootPem).raw),
      fingerprint(new X509Certificate(pki.rootPem).raw),
    ]);
    expect(parseAppleRootCerts('')).toEqual([]);
    // The same root twice is one trusted root; Apple's is always there.
    expect(createAppleTrust({ extraRoots: `${pki.rootPem},${derFile}` }).roots).toHaveLength(2);
  });

  it('refuses a bad STORE_APPLE_ROOT_CERTS entry with one error naming it', async () => {
    const leafFile = join(dir, 'leaf.pem');
    writeFileSync(leafFile, new X509Certificate(Buffer.from(pki.chain.x5c[0]!, 'base64')).toString());
    const garbage = join(dir, 'garbage.cer');
    writeFileSync(garbage, 'not a certificate');
    const keyPem = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----';
    const cases: [string, RegExp][] = [
      [join(dir, 'nowhere.pem'), /entry 1 \(file .*nowhere\.pem\): cannot be read \(ENOENT\)/],
      [`${pki.rootPem},${leafFile}`, /entry 2 \(file .*leaf\.pem\): not a certificate authority/],
      [garbage, /entry 1 \(file .*garbage\.cer\): not an X\.509 certificate/],
      ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', /entry 1 \(PEM text of \d+ characters\): not an X\.509 certificate/],
      [keyPem, /entry 1 \(PEM text of \d+ characters\): holds no PEM certificate/],
    ];
    for (const [setting, message] of cases) {
      const err = thrown(() => parseAppleRootCerts(setting));
      expect(err, setting).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/^Invalid configuration:\n {2}STORE_APPLE_ROOT_CERTS /);
      expect(err.message).toMatch(message);
      expect(err.message).not.toContain('MIGHAgEAMBMG');
    }
  });

  describe("Apple's production chain under the shipped root", () => {
    // Apple's signature cannot be forged here: a JWS with Apple's x5c and a signature of our own
    // passes every check before the signature when the certificates are valid, and only then fails.
    const forged = async (x5c: string[]) => {
      const payload = Buffer.from(JSON.stringify(appleTransaction())).toString('base64url');
      const header = Buffer.from(JSON.stringify({ alg: 'ES256', x5c })).toString('base64url');
      const signature = (await pki.chain.sign(appleTransaction())).split('.')[2];
      return `${header}.${payload}.${signature}`;
    };
    const reason = (p: Promise<unknown>) =>
      p.then(
        () => 'accepted',
        (e: unknown) => (e instanceof AppleJwsError ? e.reason : String(e)),
      );
    const appleRootB64 = () => loadShippedAppleRoot().toString('base64');

    it('passes the chain, the OIDs and the validity windows (P-384 root and intermediate, P-256 leaf)', async () => {
      const trust = createAppleTrust();
      expect(
        await reason(
          verifyAppleJws(await forged([APPLE_PRODUCTION_LEAF, APPLE_PRODUCTION_INTERMEDIATE, appleRootB64()]), trust, INSIDE_LEAF_VALIDITY),
        ),
      ).toBe('signature');
      expect(await reason(verifyAppleJws(await forged([APPLE_PRODUCTION_LEAF, APPLE_PRODUCTION_INTERMEDIATE]), trust, INSIDE_LEAF_VALIDITY))).toBe(
        'signature',
      );
      expect(trust.intermediates.size).toBe(1);
      // That leaf has since expired.
      expect(await reason(verifyAppleJws(await forged([APPLE_PRODUCTION_LEAF, APPLE_PRODUCTION_INTERMEDIATE]), trust))).toBe('certificate_expired');
    });

    it('is untrusted without Apple Root CA - G3 among the roots', async () => {
      const testRootOnly = new AppleTrust(parseAppleRootCerts(pki.rootPem));
      const jws = await forged([APPLE_PRODUCTION_LEAF, APPLE_PRODUCTION_INTERMEDIATE, appleRootB64()]);
      expect(await reason(verifyAppleJws(jws, testRootOnly, INSIDE_LEAF_VALIDITY))).toBe('chain_untrusted');
      const withoutRoot = await forged([APPLE_PRODUCTION_LEAF, APPLE_PRODUCTION_INTERMEDIATE]);
      expect(await reason(verifyAppleJws(withoutRoot, testRootOnly, INSIDE_LEAF_VALIDITY))).toBe('chain_untrusted');
    });
  });
});
