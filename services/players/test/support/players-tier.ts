import { randomBytes, randomUUID } from 'node:crypto';
import { RegisterPlayer, ResolveApiKey, type CallContext, type RequestOf } from '@ccs/shared';
import { startServiceTier, type ServiceTier } from '@ccs/shared/testing';
import { PlayersConfigSchema, type PlayersConfig } from '../../src/config.js';
import { playersService } from '../../src/service.js';

/** The players service alone over its own database and NATS prefix. */
export type PlayersTier = ServiceTier<PlayersConfig>;

/**
 * Starts players alone (it asks no other service: its grants leave through its outbox), with a
 * demo app of a known key, cheap password hashing, and no wait for grants no wallet will apply.
 * Answers the tier and the demo app's id.
 */
export async function startPlayersTier(env: Record<string, string> = {}): Promise<{ tier: PlayersTier; appId: string; apiKey: string }> {
  const apiKey = `demo_${randomBytes(16).toString('hex')}`;
  const tier = await startServiceTier(playersService, (e) => PlayersConfigSchema.parse(e), {
    env: { CHESTS_DEMO_API_KEY: apiKey, ARGON2_MEMORY_KIB: '1024', ARGON2_TIME_COST: '1', GRANT_WAIT_MS: '0', ...env },
  });
  const { appId } = await tier.bus.request(ResolveApiKey, { apiKey }, { requestId: randomUUID() });
  return { tier, appId, apiKey };
}

/** The call context of a request of the app, as a player when given. */
export const callOf = (appId: string, playerId?: string): CallContext => ({ requestId: randomUUID(), appId, playerId });

/**
 * A registered player, made through players' own registration subject: defaults to a fresh email
 * and a password every rule accepts; `overrides` change any field of the request.
 */
export async function registeredPlayer(tier: PlayersTier, appId: string, overrides: Partial<RequestOf<typeof RegisterPlayer>> = {}) {
  const password = overrides.password ?? 'Str0ng!pass';
  const email = overrides.email ?? `player-${randomBytes(5).toString('hex')}@example.com`;
  const session = await tier.bus.request(RegisterPlayer, { email, password, passwordConfirmation: password, ...overrides }, callOf(appId));
  return { ...session, email, password };
}
