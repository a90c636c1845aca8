import { createHash, X509Certificate, type KeyObject } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';

/** Apple's marker extension on the certificate that signs App Store data (the leaf). */
export const APPLE_LEAF_OID = '1.2.840.113635.100.6.11.1';
/** Apple's marker extension on the Worldwide Developer Relations intermediate. */
export const APPLE_INTERMEDIATE_OID = '1.2.840.113635.100.6.2.1';

/** A certificate read once: its DER bytes, their SHA-256, Node's view of it and the fields we check. */
export interface ParsedCertificate {
  readonly der: Buffer;
  /** SHA-256 of the DER bytes, lowercase hex: the certificate's identity in the caches. */
  readonly sha256: string;
  readonly x509: X509Certificate;
  /** The subject's public key, read once (jose keeps its imported form per KeyObject). */
  readonly publicKey: KeyObject;
  /** Validity window, epoch milliseconds, inclusive at both ends. */
  readonly notBefore: number;
  readonly notAfter: number;
  readonly extensionOids: ReadonlySet<string>;
}

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** `63:34:3A:…` (the form certificate viewers show) of a lowercase hex digest. */
export const colonFingerprint = (hex: string): string => hex.toUpperCase().replace(/(..)(?!$)/g, '$1:');

/** Parses DER bytes as an X.509 certificate; throws when they are not one. */
export function parseCertificate(der: Buffer): ParsedCertificate {
  const x509 = new X509Certificate(der);
  const asn = AsnConvert.parse(der, Certificate);
  const { validity, extensions } = asn.tbsCertificate;
  return {
    der,
    sha256: sha256Hex(der),
    x509,
    publicKey: x509.publicKey,
    notBefore: validity.notBefore.getTime().getTime(),
    notAfter: validity.notAfter.getTime().getTime(),
    extensionOids: new Set((extensions ?? []).map((e) => e.extnID)),
  };
}

export const isValidAt = (cert: ParsedCertificate, now: number): boolean => cert.notBefore <= now && now <= cert.notAfter;

/** The DER certificates of a PEM text (every CERTIFICATE block, in order). */
export function pemCertificates(pem: string): Buffer[] {
  const blocks = pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g);
  return [...blocks].map((m) => Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'));
}

/** A bounded map that forgets the least recently used entry first. */
export class Lru<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
}
