/** App Store signed data: the trusted roots, the JWS verification and the payloads' schemas. */
export { APPLE_ROOT_CA_G3_SHA256, SHIPPED_APPLE_ROOT, createAppleTrust, loadShippedAppleRoot, parseAppleRootCerts } from './roots.js';
export { AppleTrust } from './trust.js';
export { AppleJwsError, verifyAppleJws, type AppleJwsRefusal } from './verify.js';
export * from './payloads.js';
