import { Lru, parseCertificate, type ParsedCertificate } from './certificates.js';

/** How many verified links each cache keeps (Apple signs with one leaf at a time; 64 leaves room for rotation and sandbox). */
export const LINK_CACHE_SIZE = 64;

/** An intermediate already verified against a trusted root. */
export interface VerifiedIntermediate {
  readonly intermediate: ParsedCertificate;
  readonly root: ParsedCertificate;
}

/**
 * The certificates App Store signatures may chain to, read once at start, and the chain links
 * already verified under them. The caches live here so that each set of roots has its own: a link
 * verified under one set says nothing under another.
 */
export class AppleTrust {
  readonly roots: readonly ParsedCertificate[];
  private readonly byHash: ReadonlyMap<string, ParsedCertificate>;
  /** Intermediates verified against a root (names, CA flag, signature, Apple's OID), by the intermediate's DER SHA-256. */
  readonly intermediates = new Lru<VerifiedIntermediate>(LINK_CACHE_SIZE);
  /** Leaves verified against an intermediate (names, signature, Apple's OID), by `<leaf SHA-256>:<intermediate SHA-256>`. */
  readonly leaves = new Lru<ParsedCertificate>(LINK_CACHE_SIZE);

  /**
   * @param roots DER certificates, each with a label for errors (a file name, a setting's entry).
   * Throws when one is not a certificate or not a certificate authority.
   */
  constructor(roots: readonly { der: Buffer; label: string }[]) {
    const parsed = new Map<string, ParsedCertificate>();
    for (const { der, label } of roots) {
      let cert: ParsedCertificate;
      try {
        cert = parseCertificate(der);
      } catch (err) {
        throw new Error(`${label}: not an X.509 certificate (${(err as Error).message})`, { cause: err });
      }
      if (!cert.x509.ca) throw new Error(`${label}: not a certificate authority (basicConstraints CA is not set)`);
      parsed.set(cert.sha256, cert);
    }
    if (parsed.size === 0) throw new Error('no trusted root certificate for App Store signatures');
    this.byHash = parsed;
    this.roots = [...parsed.values()];
  }

  /** The trusted root with exactly these DER bytes, if any. */
  rootByHash(sha256: string): ParsedCertificate | undefined {
    return this.byHash.get(sha256);
  }
}
