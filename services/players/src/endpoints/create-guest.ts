import { randomUUID } from 'node:crypto';
import { CreateGuest, endpoint, requireApp } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { playerRulesOf } from '../repositories/apps-repository.js';
import { insertPlayer } from '../repositories/players-repository.js';
import { planWelcomeGrants } from '../saga/welcome-grants.js';
import { withWelcomeGrants } from '../saga/with-welcome-grants.js';
import { issueSession } from '../tokens/issue-session.js';

/**
 * Creates an anonymous player with tokens, its initial currency and a starter chest. The welcome
 * bonus comes when the guest registers (reported here as zero amounts).
 */
export function createGuestEndpoint(d: PlayersDeps) {
  return endpoint(CreateGuest, async (_req, ctx) => {
    const appId = requireApp(ctx);
    const rules = await playerRulesOf(d.pool, appId);
    const playerId = randomUUID();
    const starterChestId = randomUUID();
    const plan = planWelcomeGrants('guest', rules, { appId, playerId, starterChestId });
    const session = await withWelcomeGrants(d, plan, ctx, async (tx) => {
      const player = await insertPlayer(tx, { id: playerId, appId, email: null, passwordHash: null, starterChestId });
      return issueSession(tx, d.signer, player, rules);
    });
    const noBonus = Object.fromEntries(Object.keys(rules.welcome_bonus).map((code) => [code, 0]));
    return { ...session, grants: { initialCurrency: rules.initial_currency, welcomeBonus: noBonus, starterChestId } };
  });
}
