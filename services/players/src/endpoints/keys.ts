import { endpoint, GetJwks, ResolveApiKey } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { resolveApiKey } from '../repositories/api-keys-repo.js';
import { playerErrors } from '../errors.js';

/** apikey → app and key kind; 404 for an unknown or revoked key (the gateway answers 401). */
export function resolveApiKeyEndpoint(d: PlayersDeps) {
  return endpoint(ResolveApiKey, async (req) => {
    const found = await resolveApiKey(d.pool, req.apiKey);
    if (!found) throw playerErrors.apiKeyNotFound();
    return found;
  });
}

/** The public keys that verify access tokens, by kid. */
export function jwksEndpoint(d: PlayersDeps) {
  return endpoint(GetJwks, async () => ({
    issuer: d.config.JWT_ISSUER,
    keys: d.keys.verifying.map((k) => ({ kid: k.kid, alg: 'ES256' as const, publicKeyPem: k.publicPem })),
  }));
}
