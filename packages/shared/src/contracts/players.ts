import { z } from 'zod';
import { defineSubject } from './subject.js';
import { UuidSchema } from './context.js';

/** Resolves an `apikey` header to its app; the gateway caches the answer briefly. */
export const ResolveApiKey = defineSubject(
  'players.v1.resolve_api_key',
  z.object({ apiKey: z.string().min(1).max(200) }),
  z.object({
    appId: UuidSchema,
    /** `publishable` keys come from game clients; `secret` keys from the studio's servers. */
    keyKind: z.enum(['publishable', 'secret']),
  }),
);

/** The public keys that verify access tokens (JWK set), for the gateway. */
export const GetJwks = defineSubject(
  'players.v1.jwks',
  z.object({}),
  z.object({
    issuer: z.string(),
    keys: z.array(z.object({ kid: z.string(), alg: z.literal('ES256'), publicKeyPem: z.string() })).min(1),
  }),
);
