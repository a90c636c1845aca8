/** App Store signed data: the trusted roots, the JWS verification and the payloads' schemas. */
export { APPLE_INTERMEDIATE_OID, APPLE_LEAF_OID } from './certificates.js';
export { APPLE_ROOT_CA_G3_SHA256, SHIPPED_APPLE_ROOT, createAppleTrust, loadShippedAppleRoot, parseAppleRootCerts } from './roots.js';
export { AppleTrust, LINK_CACHE_SIZE } from './trust.js';
export {
  AppleJwsError,
  MAX_CERTIFICATE_BYTES,
  MAX_JWS_LENGTH,
  verifyAppleJws,
  type AppleJwsHeader,
  type AppleJwsRefusal,
  type VerifiedAppleJws,
} from './verify.js';
export * from './payloads.js';
