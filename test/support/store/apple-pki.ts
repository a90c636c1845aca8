/**
 * A test certificate authority shaped like the App Store's: a P-384 root, a P-384 intermediate with
 * Apple's intermediate OID, a P-256 leaf with Apple's leaf OID (certificates signed ECDSA SHA-384,
 * as Apple's are), and JWS signed as Apple signs them (ES256, `x5c` = [leaf, intermediate, root]).
 * Trust its root with `STORE_APPLE_ROOT_CERTS=<rootPem>` (or `createAppleTrust({ extraRoots })`).
 *
 * Keys are generated once per process; variant chains (an OID left out, an expired leaf, another
 * root, a self-signed leaf) are issued on demand with those keys and kept, and variants that differ
 * only in the leaf share the valid chain's intermediate certificate.
 */
import 'reflect-metadata';
import { createHmac, randomInt, randomUUID, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { CompactSign, exportJWK } from 'jose';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export const APPLE_LEAF_OID = '1.2.840.113635.100.6.11.1';
export const APPLE_INTERMEDIATE_OID = '1.2.840.113635.100.6.2.1';

const DAY = 86_400_000;
const SIGNING = { name: 'ECDSA', hash: 'SHA-384' } as const;
/** DER of ASN.1 NULL: the value Apple's marker extensions carry. */
const ASN1_NULL = new Uint8Array([0x05, 0x00]);
const ORG = 'O=Collectible Chest Service Tests, C=US';

export interface ChainOptions {
  /** Leave Apple's leaf OID out of the leaf. */
  omitLeafOid?: boolean;
  /** Leave Apple's intermediate OID out of the intermediate. */
  omitIntermediateOid?: boolean;
  /** A leaf whose validity ended yesterday. */
  expiredLeaf?: boolean;
  /** An intermediate whose validity ended yesterday (its leaf is still valid). */
  expiredIntermediate?: boolean;
  /** The whole chain under another root, which no test trusts. */
  untrustedRoot?: boolean;
  /** A leaf that signed its own certificate (x5c still carries the real intermediate and root). */
  selfSignedLeaf?: boolean;
  /** An intermediate without the CA flag. */
  intermediateNotCa?: boolean;
}

/** A chain and the leaf's private key: signs JWS as the App Store does. */
export interface SigningChain {
  /** [leaf, intermediate, root], base64 DER. */
  readonly x5c: readonly string[];
  readonly leafKey: CryptoKey;
  /** An ES256 JWS of `payload` with `x5c` (pass `x5c` to send another list, e.g. without the root). */
  sign(payload: object, header?: { x5c?: readonly string[] }): Promise<string>;
}

type KeyPair = CryptoKeyPair;
const generate = (namedCurve: 'P-256' | 'P-384'): Promise<KeyPair> =>
  webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve }, true, ['sign', 'verify']) as Promise<KeyPair>;

interface Keys {
  root: KeyPair;
  intermediate: KeyPair;
  leaf: KeyPair;
  otherRoot: KeyPair;
  otherIntermediate: KeyPair;
  other: KeyPair;
}

async function caCertificate(params: {
  subject: string;
  keys: KeyPair;
  issuer?: { cert: x509.X509Certificate; key: CryptoKey };
  appleOid?: boolean;
  ca?: boolean;
  expired?: boolean;
}): Promise<x509.X509Certificate> {
  const now = Date.now();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(params.ca ?? true, params.issuer ? 0 : undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    await x509.SubjectKeyIdentifierExtension.create(params.keys.publicKey),
  ];
  if (params.appleOid) extensions.push(new x509.Extension(APPLE_INTERMEDIATE_OID, false, ASN1_NULL));
  const notAfter = new Date(params.expired ? now - DAY : now + 10 * 365 * DAY);
  const window = { notBefore: new Date(now - 365 * DAY), notAfter, signingAlgorithm: SIGNING };
  if (!params.issuer) return x509.X509CertificateGenerator.createSelfSigned({ ...window, name: params.subject, keys: params.keys, extensions });
  extensions.push(await x509.AuthorityKeyIdentifierExtension.create(params.issuer.cert.publicKey));
  return x509.X509CertificateGenerator.create({
    ...window,
    subject: params.subject,
    issuer: params.issuer.cert.subject,
    publicKey: params.keys.publicKey,
    signingKey: params.issuer.key,
    extensions,
  });
}

async function leafCertificate(params: {
  keys: KeyPair;
  issuer: { cert: x509.X509Certificate; key: CryptoKey } | 'self';
  appleOid: boolean;
  expired: boolean;
}): Promise<x509.X509Certificate> {
  const now = Date.now();
  const subject = `CN=Test Prod ECC Mac App Store and iTunes Store Receipt Signing, OU=Test Worldwide Developer Relations, ${ORG}`;
  const self = params.issuer === 'self';
  const issuerKey = self ? params.keys.publicKey : (params.issuer as { cert: x509.X509Certificate }).cert.publicKey;
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    await x509.SubjectKeyIdentifierExtension.create(params.keys.publicKey),
    await x509.AuthorityKeyIdentifierExtension.create(issuerKey),
  ];
  if (params.appleOid) extensions.push(new x509.Extension(APPLE_LEAF_OID, false, ASN1_NULL));
  const window = params.expired
    ? { notBefore: new Date(now - 400 * DAY), notAfter: new Date(now - DAY) }
    : { notBefore: new Date(now - DAY), notAfter: new Date(now + 365 * DAY) };
  return x509.X509CertificateGenerator.create({
    ...window,
    subject,
    issuer: self ? subject : (params.issuer as { cert: x509.X509Certificate }).cert.subject,
    publicKey: params.keys.publicKey,
    signingKey: self ? params.keys.privateKey : (params.issuer as { key: CryptoKey }).key,
    signingAlgorithm: SIGNING,
    extensions,
  });
}

const b64 = (cert: x509.X509Certificate): string => Buffer.from(cert.rawData).toString('base64');

async function signJws(payload: object, x5c: readonly string[], key: CryptoKey): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: 'ES256', x5c: [...x5c] }).sign(key);
}

function signingChain(certs: x509.X509Certificate[], leafKey: CryptoKey): SigningChain {
  const x5c = certs.map(b64);
  return { x5c, leafKey, sign: (payload, header) => signJws(payload, header?.x5c ?? x5c, leafKey) };
}

/** The test certificate authority (one per process): see the file's header. */
export interface ApplePki {
  /** The trusted test root, PEM (for STORE_APPLE_ROOT_CERTS). */
  readonly rootPem: string;
  /** The root no test trusts, PEM. */
  readonly untrustedRootPem: string;
  /** The valid chain. */
  readonly chain: SigningChain;
  /** A chain with the given defects (kept per option set). */
  variant(options: ChainOptions): Promise<SigningChain>;
  /** A transaction signed by the valid chain. */
  signTransaction(overrides?: Partial<AppleTransactionPayload>): Promise<string>;
  /** A Server Notification V2 `signedPayload` signed by the valid chain (see appleNotification). */
  signNotification(options?: NotificationOptions): Promise<string>;
  /** Hostile JWS of a payload, each refused for its own reason. */
  readonly hostile: Hostile;
}

export interface Hostile {
  /** `alg: none` and no signature (refused: algorithm). */
  algNone(payload: object): Promise<string>;
  /** HS256 with the leaf's public key as the HMAC secret, the classic key-confusion attack (refused: algorithm). */
  hmacWithLeafKey(payload: object): Promise<string>;
  /** A good JWS whose payload is replaced by `edited` afterwards (refused: signature). */
  editedAfterSigning(payload: object, edited: object): Promise<string>;
  /** Signed by another key, with the valid chain's x5c (refused: signature). */
  resignedByOtherKey(payload: object): Promise<string>;
  /** A valid-looking chain (OIDs and all) under a root nobody trusts, root included in x5c (refused: chain_untrusted). */
  untrustedRoot(payload: object): Promise<string>;
  /** The key in a `jwk` header and no x5c (refused: malformed). */
  jwkOnly(payload: object): Promise<string>;
}

export interface AppleTransactionPayload {
  transactionId: string;
  originalTransactionId: string;
  bundleId: string;
  productId: string;
  purchaseDate: number;
  originalPurchaseDate: number;
  quantity: number;
  type: string;
  appAccountToken?: string;
  inAppOwnershipType: string;
  signedDate: number;
  environment: string;
  transactionReason: string;
  storefront: string;
  storefrontId: string;
  price?: number;
  currency?: string;
  revocationDate?: number;
  revocationReason?: number;
  [field: string]: unknown;
}

/** A consumable's transaction as the App Store writes it (sandbox, 0.99 USD), with fresh ids. */
export function appleTransaction(overrides: Partial<AppleTransactionPayload> = {}): AppleTransactionPayload {
  const now = Date.now();
  const id = String(2_000_000_000_000_000 + randomInt(0, 2 ** 47));
  return {
    transactionId: id,
    originalTransactionId: id,
    bundleId: 'com.example.chests',
    productId: 'com.example.chests.gems_100',
    purchaseDate: now,
    originalPurchaseDate: now,
    quantity: 1,
    type: 'Consumable',
    inAppOwnershipType: 'PURCHASED',
    signedDate: now,
    environment: 'Sandbox',
    transactionReason: 'PURCHASE',
    storefront: 'USA',
    storefrontId: '143441',
    price: 990,
    currency: 'USD',
    ...overrides,
  };
}

export interface NotificationOptions {
  notificationType?: string;
  subtype?: string;
  notificationUUID?: string;
  bundleId?: string;
  environment?: string;
  /** The signed transaction the notification carries (default: a new one, signed by the valid chain). */
  signedTransactionInfo?: string;
  /** Extra fields of the payload (e.g. `data: undefined`). */
  extra?: Record<string, unknown>;
}

/** A Server Notification V2 payload (responseBodyV2DecodedPayload). */
export function appleNotification(options: NotificationOptions & { signedTransactionInfo: string }): Record<string, unknown> {
  return {
    notificationType: options.notificationType ?? 'REFUND',
    ...(options.subtype ? { subtype: options.subtype } : {}),
    notificationUUID: options.notificationUUID ?? randomUUID(),
    data: {
      bundleId: options.bundleId ?? 'com.example.chests',
      bundleVersion: '1',
      environment: options.environment ?? 'Sandbox',
      signedTransactionInfo: options.signedTransactionInfo,
    },
    version: '2.0',
    signedDate: Date.now(),
    ...options.extra,
  };
}

async function generateKeys(): Promise<Keys> {
  const [root, intermediate, leaf, otherRoot, otherIntermediate, other] = await Promise.all([
    generate('P-384'),
    generate('P-384'),
    generate('P-256'),
    generate('P-384'),
    generate('P-384'),
    generate('P-256'),
  ]);
  return { root, intermediate, leaf, otherRoot, otherIntermediate, other };
}

async function buildIntermediate(
  keys: Keys,
  roots: Roots,
  options: ChainOptions,
): Promise<{ cert: x509.X509Certificate; key: CryptoKey; root: x509.X509Certificate }> {
  const root = options.untrustedRoot ? roots.untrusted : roots.trusted;
  const intermediateKeys = options.untrustedRoot ? keys.otherIntermediate : keys.intermediate;
  const cert = await caCertificate({
    subject: `CN=Test Worldwide Developer Relations Certification Authority, OU=G6, ${ORG}`,
    keys: intermediateKeys,
    issuer: { cert: root.cert, key: root.key },
    appleOid: !options.omitIntermediateOid,
    ca: !options.intermediateNotCa,
    expired: !!options.expiredIntermediate,
  });
  return { cert, key: intermediateKeys.privateKey, root: root.cert };
}

async function buildChain(intermediate: Awaited<ReturnType<typeof buildIntermediate>>, keys: Keys, options: ChainOptions): Promise<SigningChain> {
  const leaf = await leafCertificate({
    keys: keys.leaf,
    issuer: options.selfSignedLeaf ? 'self' : { cert: intermediate.cert, key: intermediate.key },
    appleOid: !options.omitLeafOid,
    expired: !!options.expiredLeaf,
  });
  return signingChain([leaf, intermediate.cert, intermediate.root], keys.leaf.privateKey);
}

interface Roots {
  trusted: { cert: x509.X509Certificate; key: CryptoKey };
  untrusted: { cert: x509.X509Certificate; key: CryptoKey };
}

function hostile(keys: Keys, chain: SigningChain, untrusted: () => Promise<SigningChain>): Hostile {
  const enc = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return {
    algNone: async (payload) => `${enc({ alg: 'none', x5c: chain.x5c })}.${enc(payload)}.`,
    hmacWithLeafKey: async (payload) => {
      const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', keys.leaf.publicKey));
      const input = `${enc({ alg: 'HS256', x5c: chain.x5c })}.${enc(payload)}`;
      return `${input}.${createHmac('sha256', spki).update(input).digest('base64url')}`;
    },
    editedAfterSigning: async (payload, edited) => {
      const [header, , signature] = (await chain.sign(payload)).split('.');
      return `${header}.${enc(edited)}.${signature}`;
    },
    resignedByOtherKey: (payload) => signJws(payload, chain.x5c, keys.other.privateKey),
    untrustedRoot: async (payload) => (await untrusted()).sign(payload),
    jwkOnly: async (payload) =>
      new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
        .setProtectedHeader({ alg: 'ES256', jwk: await exportJWK(keys.other.publicKey) })
        .sign(keys.other.privateKey),
  };
}

async function createApplePki(): Promise<ApplePki> {
  const keys = await generateKeys();
  const rootName = (label: string) => `CN=Test ${label} Root CA - G3, OU=Test Certification Authority, ${ORG}`;
  const roots: Roots = {
    trusted: { cert: await caCertificate({ subject: rootName('Apple'), keys: keys.root }), key: keys.root.privateKey },
    untrusted: { cert: await caCertificate({ subject: rootName('Untrusted'), keys: keys.otherRoot }), key: keys.otherRoot.privateKey },
  };
  // One certificate per distinct intermediate, shared by the variants that differ only in the leaf.
  const intermediates = new Map<string, ReturnType<typeof buildIntermediate>>();
  const variants = new Map<string, Promise<SigningChain>>();
  const keyOf = (options: object) =>
    JSON.stringify(
      Object.entries(options)
        .filter(([, v]) => v)
        .sort(),
    );
  const variant = (options: ChainOptions): Promise<SigningChain> => {
    const { untrustedRoot, omitIntermediateOid, intermediateNotCa, expiredIntermediate } = options;
    const intermediateKey = keyOf({ untrustedRoot, omitIntermediateOid, intermediateNotCa, expiredIntermediate });
    if (!intermediates.has(intermediateKey)) intermediates.set(intermediateKey, buildIntermediate(keys, roots, options));
    const key = keyOf(options);
    if (!variants.has(key))
      variants.set(
        key,
        intermediates.get(intermediateKey)!.then((i) => buildChain(i, keys, options)),
      );
    return variants.get(key)!;
  };
  const chain = await variant({});
  const signTransaction = (overrides?: Partial<AppleTransactionPayload>) => chain.sign(appleTransaction(overrides));
  return {
    rootPem: roots.trusted.cert.toString('pem'),
    untrustedRootPem: roots.untrusted.cert.toString('pem'),
    chain,
    variant,
    signTransaction,
    signNotification: async (options = {}) =>
      chain.sign(appleNotification({ ...options, signedTransactionInfo: options.signedTransactionInfo ?? (await signTransaction()) })),
    hostile: hostile(keys, chain, () => variant({ untrustedRoot: true })),
  };
}

let pki: Promise<ApplePki> | undefined;

/** The process's test certificate authority (created on first use). */
export function applePki(): Promise<ApplePki> {
  pki ??= createApplePki();
  return pki;
}
