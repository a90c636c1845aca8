import { BaseConfigSchema } from '@ccs/shared';
import { z } from 'zod';

/** An empty variable (`KEY=` in an env file) counts as unset. */
const unsetIfEmpty = <S extends z.ZodType>(schema: S) => z.preprocess((v) => (v === '' ? undefined : v), schema);

const Pem = z
  .string()
  // Env files often carry PEMs on one line with literal "\n".
  .transform((s) => s.replace(/\\n/g, '\n').trim())
  .refine((s) => s.startsWith('-----BEGIN '), 'must be a PEM block (-----BEGIN ...)');

/** players service settings, from the environment. */
export const PlayersConfigSchema = BaseConfigSchema.extend({
  /** Publishable key of the demo app; a random one is generated and logged once when unset. */
  CHESTS_DEMO_API_KEY: unsetIfEmpty(z.string().min(16).max(200).optional()),
  /** ES256 (P-256) private key signing access tokens; generated and stored in the schema when unset. */
  JWT_PRIVATE_KEY: unsetIfEmpty(Pem.optional()),
  /** Its public key; derived from the private key when unset. */
  JWT_PUBLIC_KEY: unsetIfEmpty(Pem.optional()),
  JWT_ISSUER: z.string().min(1).default('collectible-chest-service'),
  JWT_AUDIENCE: z.string().min(1).default('collectible-chest-api'),
  ARGON2_MEMORY_KIB: z.coerce.number().int().min(1024).max(4_194_304).default(19_456),
  ARGON2_TIME_COST: z.coerce.number().int().min(1).max(20).default(2),
  /** How long registration waits for the wallet to apply the initial credits (read-your-writes). */
  GRANT_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(2000),
}).refine((c) => !c.JWT_PUBLIC_KEY || c.JWT_PRIVATE_KEY, {
  message: 'JWT_PUBLIC_KEY needs JWT_PRIVATE_KEY',
  path: ['JWT_PUBLIC_KEY'],
});
export type PlayersConfig = z.infer<typeof PlayersConfigSchema>;
