/**
 * Offline verification of the JWS data the App Store signs (a transaction's
 * `signedTransactionInfo`, a Server Notification V2's `signedPayload`, `signedRenewalInfo`). The
 * checks run in this order, and the first that fails refuses with its reason:
 *
 * 1. `malformed`: not a string, or longer than 32 KiB (checked before anything is decoded); not
 *    `header.payload.signature` in base64url with a non-empty header and payload; a header that is
 *    not a JSON object.
 * 2. `algorithm`: the header's `alg` is not exactly `ES256` (`none`, HS256, RS256, ES384… refused).
 * 3. `malformed`: a `crit` header; no `x5c` (a key given by `jwk`, `jku`, `x5u` or `kid` is never
 *    used); `x5c` not a list of 2 or 3 strings; an entry longer than 8 KiB of DER (checked on its
 *    base64 length first), not base64, or not an X.509 certificate.
 * 4. `chain_untrusted`: `x5c` is [leaf, intermediate, root?]. A root sent in `x5c` must be
 *    byte-equal to a trusted root (a root is never trusted because the JWS carries it); the
 *    intermediate must be a certificate authority (basicConstraints CA) issued and signed by a
 *    trusted root, the same one as `x5c`'s root when one is sent; the leaf must be issued and
 *    signed by the intermediate. "Issued" means Node's X509Certificate.checkIssued (issuer name,
 *    key identifiers, the issuer's key usage); "signed" its verify(issuer's public key).
 * 5. `certificate_oid`: the leaf lacks Apple's extension 1.2.840.113635.100.6.11.1, or the
 *    intermediate lacks 1.2.840.113635.100.6.2.1.
 * 6. `certificate_expired`: the leaf, the intermediate or the root is outside its validity window
 *    at `now` (expired or not yet valid); checked on every call, cached chain or not.
 * 7. `signature`: the JWS signature does not verify with the leaf's public key (jose, ES256 only).
 * 8. `malformed`: the verified payload is not a JSON object.
 *
 * The verified links of step 4 (intermediate → root, leaf → intermediate) are cached in the trust,
 * keyed by the SHA-256 of the certificates' DER bytes (bounded, least recently used out first), so a
 * JWS from a chain seen before costs one ECDSA verification: its own signature, checked every time.
 */
import { compactVerify } from 'jose';
import { APPLE_INTERMEDIATE_OID, APPLE_LEAF_OID, isValidAt, parseCertificate, sha256Hex, type ParsedCertificate } from './certificates.js';
import type { AppleTrust, VerifiedIntermediate } from './trust.js';

export type AppleJwsRefusal = 'malformed' | 'algorithm' | 'chain_untrusted' | 'certificate_expired' | 'certificate_oid' | 'signature';

/** A JWS the App Store did not sign, or that cannot be read; `reason` is for machines, `message` for logs. */
export class AppleJwsError extends Error {
  override name = 'AppleJwsError';
  constructor(
    readonly reason: AppleJwsRefusal,
    message: string,
  ) {
    super(message);
  }
}

export const MAX_JWS_LENGTH = 32 * 1024;
export const MAX_CERTIFICATE_BYTES = 8 * 1024;
/** Base64 characters of MAX_CERTIFICATE_BYTES bytes, padding included. */
const MAX_CERTIFICATE_BASE64 = Math.ceil(MAX_CERTIFICATE_BYTES / 3) * 4;

export interface AppleJwsHeader {
  readonly alg: 'ES256';
  /** [leaf, intermediate, root?], base64 DER, as the JWS carries them. */
  readonly x5c: readonly string[];
  readonly [field: string]: unknown;
}

export interface VerifiedAppleJws {
  /** The decoded payload, for the caller's schema. */
  readonly payload: unknown;
  readonly header: AppleJwsHeader;
}

const refuse = (reason: AppleJwsRefusal, message: string): AppleJwsError => new AppleJwsError(reason, message);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Steps 1–3 for the header: structure, JSON, `alg`, the shape of `x5c`. */
function readHeader(jws: unknown): AppleJwsHeader {
  if (typeof jws !== 'string') throw refuse('malformed', 'the JWS is not a string');
  if (jws.length > MAX_JWS_LENGTH) throw refuse('malformed', `the JWS is longer than ${MAX_JWS_LENGTH} characters`);
  const parts = jws.split('.');
  // An empty signature passes here, so that `alg: none` is refused as such (step 2) and an empty
  // ES256 signature as a bad signature (step 7).
  if (parts.length !== 3 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(jws)) {
    throw refuse('malformed', 'the JWS is not in compact serialization (header.payload.signature, base64url)');
  }
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
  } catch {
    throw refuse('malformed', 'the JWS header is not JSON');
  }
  if (!isObject(header)) throw refuse('malformed', 'the JWS header is not a JSON object');
  if (header.alg !== 'ES256') throw refuse('algorithm', `the JWS algorithm ${JSON.stringify(header.alg ?? null).slice(0, 40)} is not ES256`);
  if (header.crit !== undefined) throw refuse('malformed', 'the JWS header has critical extensions (crit)');
  const x5c = header.x5c;
  if (x5c === undefined) throw refuse('malformed', 'the JWS header has no x5c certificate chain (jwk, jku, x5u and kid are not used)');
  if (!Array.isArray(x5c) || x5c.length < 2 || x5c.length > 3) throw refuse('malformed', 'x5c is not a list of 2 or 3 certificates');
  if (!x5c.every((c): c is string => typeof c === 'string')) throw refuse('malformed', 'x5c holds something other than base64 text');
  return header as unknown as AppleJwsHeader;
}

/** Step 3 for one x5c entry: bounded base64 of bounded DER. */
function decodeCertificate(entry: string, position: string): Buffer {
  if (entry.length > MAX_CERTIFICATE_BASE64) throw refuse('malformed', `the ${position} certificate is larger than ${MAX_CERTIFICATE_BYTES} bytes`);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(entry) || entry.length % 4 !== 0) throw refuse('malformed', `the ${position} certificate is not base64`);
  const der = Buffer.from(entry, 'base64');
  if (der.length > MAX_CERTIFICATE_BYTES) throw refuse('malformed', `the ${position} certificate is larger than ${MAX_CERTIFICATE_BYTES} bytes`);
  return der;
}

function parseOrRefuse(der: Buffer, position: string): ParsedCertificate {
  try {
    return parseCertificate(der);
  } catch {
    throw refuse('malformed', `the ${position} certificate is not an X.509 certificate`);
  }
}

/** `child` names `issuer` as its issuer (names, key identifiers, key usage) and carries its signature. */
function issuedBy(child: ParsedCertificate, issuer: ParsedCertificate): boolean {
  try {
    return child.x509.checkIssued(issuer.x509) && child.x509.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

interface Chain {
  readonly leaf: ParsedCertificate;
  readonly intermediate: ParsedCertificate;
  readonly root: ParsedCertificate;
}

/** Steps 3 (the certificates) and 4: the chain, from the caches when its links were verified before. */
function verifyChain(x5c: readonly string[], trust: AppleTrust): Chain {
  const [leafDer, intermediateDer, rootDer] = x5c.map((entry, i) => decodeCertificate(entry, ['leaf', 'intermediate', 'root'][i]!));
  const intermediateHash = sha256Hex(intermediateDer!);
  const leafKey = `${sha256Hex(leafDer!)}:${intermediateHash}`;
  const knownIntermediate = trust.intermediates.get(intermediateHash);
  const knownLeaf = trust.leaves.get(leafKey);
  const intermediate = knownIntermediate?.intermediate ?? parseOrRefuse(intermediateDer!, 'intermediate');
  const leaf = knownLeaf ?? parseOrRefuse(leafDer!, 'leaf');
  let sentRoot: ParsedCertificate | undefined;
  if (rootDer) {
    sentRoot = trust.rootByHash(sha256Hex(rootDer));
    if (!sentRoot) {
      parseOrRefuse(rootDer, 'root');
      throw refuse('chain_untrusted', 'the root certificate in x5c is not a trusted root');
    }
  }
  const link = knownIntermediate ?? verifyIntermediate(intermediate, trust);
  if (sentRoot && sentRoot !== link.root) throw refuse('chain_untrusted', 'the root certificate in x5c did not issue the intermediate');
  if (!knownLeaf) {
    if (!issuedBy(leaf, intermediate)) throw refuse('chain_untrusted', 'the leaf certificate is not issued by the intermediate');
    trust.leaves.set(leafKey, leaf);
  }
  return { leaf, intermediate, root: link.root };
}

function verifyIntermediate(intermediate: ParsedCertificate, trust: AppleTrust): VerifiedIntermediate {
  if (!intermediate.x509.ca) throw refuse('chain_untrusted', 'the intermediate certificate is not a certificate authority');
  const root = trust.roots.find((r) => issuedBy(intermediate, r));
  if (!root) throw refuse('chain_untrusted', 'the intermediate certificate is not issued by a trusted root');
  const link = { intermediate, root };
  trust.intermediates.set(intermediate.sha256, link);
  return link;
}

/** Steps 5 and 6. */
function checkCertificates({ leaf, intermediate, root }: Chain, now: number): void {
  if (!leaf.extensionOids.has(APPLE_LEAF_OID)) throw refuse('certificate_oid', `the leaf certificate lacks Apple's extension ${APPLE_LEAF_OID}`);
  if (!intermediate.extensionOids.has(APPLE_INTERMEDIATE_OID)) {
    throw refuse('certificate_oid', `the intermediate certificate lacks Apple's extension ${APPLE_INTERMEDIATE_OID}`);
  }
  for (const [position, cert] of [
    ['leaf', leaf],
    ['intermediate', intermediate],
    ['root', root],
  ] as const) {
    if (!isValidAt(cert, now)) {
      const when = `${new Date(cert.notBefore).toISOString()} to ${new Date(cert.notAfter).toISOString()}`;
      throw refuse('certificate_expired', `the ${position} certificate is not valid at ${new Date(now).toISOString()} (valid ${when})`);
    }
  }
}

/** Steps 7 and 8. */
async function verifySignature(jws: string, leaf: ParsedCertificate): Promise<unknown> {
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(jws, leaf.publicKey, { algorithms: ['ES256'] }));
  } catch {
    throw refuse('signature', "the JWS signature does not verify with the leaf certificate's key");
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload).toString('utf8'));
  } catch {
    throw refuse('malformed', 'the JWS payload is not JSON');
  }
  if (!isObject(decoded)) throw refuse('malformed', 'the JWS payload is not a JSON object');
  return decoded;
}

/**
 * Verifies a JWS the App Store signed and returns its decoded payload and header; refuses with an
 * AppleJwsError (see the rules above). `now` is the instant the certificates must be valid at.
 */
export async function verifyAppleJws(jws: string, trust: AppleTrust, now: Date = new Date()): Promise<VerifiedAppleJws> {
  if (Number.isNaN(now.getTime())) throw new TypeError('verifyAppleJws: now is not a valid date');
  const header = readHeader(jws);
  const chain = verifyChain(header.x5c, trust);
  checkCertificates(chain, now.getTime());
  const payload = await verifySignature(jws, chain.leaf);
  return { payload, header };
}
