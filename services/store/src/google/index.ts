import type { StoreConfig } from '../config.js';
import { GoogleAccessTokens } from './access-tokens.js';
import { GooglePlayClient } from './play-client.js';
import { PushVerifier } from './push-auth.js';
import type { ServiceAccountKey } from './service-account.js';

export { GoogleAccessTokens } from './access-tokens.js';
export { type GoogleFailure } from './http.js';
export { decodePushBody } from './notifications.js';
export { GooglePlayClient } from './play-client.js';
export { PushVerifier } from './push-auth.js';
export { InvalidServiceAccountKeyError, parseServiceAccountKey, ServiceAccountKey } from './service-account.js';

/** The store's Google side, built once per service from its settings. */
export interface GooglePlay {
  /** Access tokens, cached per service account for the whole service. */
  tokens: GoogleAccessTokens;
  /** Pub/Sub push verification (its key set is fetched and cached once per service). */
  push: PushVerifier;
  /** A client of the Play Developer API for one app's service account. */
  client(credentials: ServiceAccountKey): GooglePlayClient;
}

type GoogleSettings = Pick<StoreConfig, 'STORE_GOOGLE_API_URL' | 'STORE_GOOGLE_TOKEN_URL' | 'STORE_GOOGLE_OIDC_JWKS_URL' | 'STORE_GOOGLE_TIMEOUT_MS'>;

export function googlePlay(config: GoogleSettings): GooglePlay {
  const timeoutMs = config.STORE_GOOGLE_TIMEOUT_MS;
  const tokens = new GoogleAccessTokens({ tokenUrl: config.STORE_GOOGLE_TOKEN_URL, timeoutMs });
  const push = new PushVerifier({ jwksUrl: config.STORE_GOOGLE_OIDC_JWKS_URL, timeoutMs });
  return {
    tokens,
    push,
    client: (credentials) => new GooglePlayClient({ apiUrl: config.STORE_GOOGLE_API_URL, timeoutMs, tokens, credentials }),
  };
}
