import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '@ccs/shared';
import { colonFingerprint, parseCertificate, pemCertificates, sha256Hex } from './certificates.js';
import { AppleTrust } from './trust.js';

/**
 * Apple Root CA - G3, the root of every App Store signature, ships with the service as a public
 * certificate (assets/AppleRootCA-G3.pem, as published at https://www.apple.com/certificateauthority/)
 * and is pinned here by the SHA-256 of its DER bytes: the service refuses to start when the file
 * holds anything else.
 */
export const APPLE_ROOT_CA_G3_SHA256 = '63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79';

/** The shipped file, found from src/apple/ (tsx) and dist/apple/ (the build) alike. */
export const SHIPPED_APPLE_ROOT = new URL('../../assets/AppleRootCA-G3.pem', import.meta.url);

const SETTING = 'STORE_APPLE_ROOT_CERTS';

/** Reads the shipped Apple root and checks its pinned fingerprint; returns its DER bytes. */
export function loadShippedAppleRoot(file: URL | string = SHIPPED_APPLE_ROOT): Buffer {
  const path = file instanceof URL ? fileURLToPath(file) : file;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`Apple root certificate ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const certs = pemCertificates(text);
  if (certs.length !== 1) throw new ConfigError(`Apple root certificate ${path} must hold exactly one PEM certificate (found ${certs.length})`);
  const fingerprint = colonFingerprint(sha256Hex(certs[0]!));
  if (fingerprint !== APPLE_ROOT_CA_G3_SHA256) {
    throw new ConfigError(
      `Apple root certificate ${path} has SHA-256 fingerprint ${fingerprint}, but Apple Root CA - G3 is pinned as ${APPLE_ROOT_CA_G3_SHA256}; refusing to trust it`,
    );
  }
  return certs[0]!;
}

/** A printable name for one entry of the setting: its path, or its position and size (never its text). */
const describeEntry = (index: number, entry: string, isPem: boolean): string =>
  `${SETTING} entry ${index + 1} (${isPem ? `PEM text of ${entry.length} characters` : `file ${entry}`})`;

/** The DER certificates of one entry: PEM text, or the path of a PEM or DER (.cer) file. */
function entryCertificates(entry: string, name: string, isPem: boolean): Buffer[] {
  if (isPem) return pemCertificates(entry);
  let bytes: Buffer;
  try {
    bytes = readFileSync(entry);
  } catch (err) {
    throw new ConfigError(`Invalid configuration:\n  ${name}: cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const text = bytes.toString('latin1');
  return text.includes('-----BEGIN') ? pemCertificates(text) : [bytes];
}

/**
 * Parses STORE_APPLE_ROOT_CERTS: entries separated by commas, each PEM text (literal `\n` stands
 * for a line break, as env files write it) or the path of a PEM or DER file. Empty entries are
 * skipped. An entry that holds no certificate, or anything that is not a certificate authority's
 * certificate, throws one ConfigError naming it.
 */
export function parseAppleRootCerts(setting: string): { der: Buffer; label: string }[] {
  const roots: { der: Buffer; label: string }[] = [];
  setting.split(',').forEach((raw, index) => {
    const entry = raw.replace(/\\n/g, '\n').trim();
    if (entry === '') return;
    const isPem = entry.includes('-----BEGIN');
    const name = describeEntry(index, entry, isPem);
    const certs = entryCertificates(entry, name, isPem);
    if (certs.length === 0) throw new ConfigError(`Invalid configuration:\n  ${name}: holds no PEM certificate`);
    for (const der of certs) {
      let ca: boolean;
      try {
        ca = parseCertificate(der).x509.ca;
      } catch (err) {
        throw new ConfigError(`Invalid configuration:\n  ${name}: not an X.509 certificate (${(err as Error).message})`);
      }
      if (!ca) throw new ConfigError(`Invalid configuration:\n  ${name}: not a certificate authority (basicConstraints CA is not set)`);
      roots.push({ der, label: name });
    }
  });
  return roots;
}

/**
 * The trust the service verifies App Store signatures with: the shipped, pinned Apple Root CA - G3
 * and the roots STORE_APPLE_ROOT_CERTS adds. Throws a ConfigError at start on any problem.
 */
export function createAppleTrust(options: { extraRoots?: string; shippedRoot?: URL | string } = {}): AppleTrust {
  const apple = { der: loadShippedAppleRoot(options.shippedRoot), label: 'Apple Root CA - G3' };
  return new AppleTrust([apple, ...parseAppleRootCerts(options.extraRoots ?? '')]);
}
