import { randomUUID } from 'node:crypto';
import { AppError, endpoint, isUniqueViolation, RegisterPlayer, requireApp } from '@ccs/shared';
import { registrationRuleErrors } from '../credentials/registration-rules.js';
import type { PlayersDeps } from '../deps.js';
import { playerRulesOf } from '../repositories/apps-repository.js';
import { findPlayer, findPlayerByEmail, insertPlayer, upgradeToRegistered } from '../repositories/players-repository.js';
import { planWelcomeGrants } from '../saga/welcome-grants.js';
import { withWelcomeGrants } from '../saga/with-welcome-grants.js';
import { issueSession } from '../tokens/issue-session.js';

const emailTaken = () =>
  AppError.conflict('email_taken', 'An account with this email already exists.', { pointer: '/data/attributes/email' });
const alreadyRegistered = () =>
  AppError.conflict('already_registered', 'This player is already registered; log in instead.');

/**
 * Registration: checks the form rules (422 per failing rule), then creates the player with an
 * argon2id hash, or, when a guest's token calls, upgrades that guest in place. Grants go out as
 * the registration saga (see saga/with-welcome-grants.ts). The lookups and the hash take one of
 * the bounded password slots (503 `overloaded` past the bound, before anything is done).
 */
export function registerEndpoint(d: PlayersDeps) {
  return endpoint(RegisterPlayer, async (req, ctx) => {
    const appId = requireApp(ctx);
    const errors = registrationRuleErrors(req);
    if (errors.length) throw AppError.many(errors);
    // The lookups and the hash in one bounded password slot: past the bound, 503 before anything is done.
    const { guest, rules, passwordHash } = await d.hasher.withSlot(async (pw) => {
      const guest = ctx.playerId ? await findPlayer(d.pool, appId, ctx.playerId) : undefined;
      if (ctx.playerId && !guest) throw AppError.unauthorized('invalid_token', 'The access token names no player of this app.');
      if (guest && !guest.isAnonymous) throw alreadyRegistered();
      // Checked first to spare the hashing; the unique index still decides races.
      if (await findPlayerByEmail(d.pool, appId, req.email)) throw emailTaken();
      const rules = await playerRulesOf(d.pool, appId);
      return { guest, rules, passwordHash: await pw.hash(req.password) };
    });
    const playerId = guest?.id ?? randomUUID();
    const starterChestId = guest?.starterChestId ?? randomUUID();
    const plan = planWelcomeGrants(guest ? 'upgrade' : 'registration', rules, { appId, playerId, starterChestId });
    try {
      const session = await withWelcomeGrants(d, plan, ctx, async (tx) => {
        const player = guest
          ? await upgradeToRegistered(tx, appId, playerId, { email: req.email, passwordHash })
          : await insertPlayer(tx, { id: playerId, appId, email: req.email, passwordHash, starterChestId });
        if (!player) throw alreadyRegistered();
        return issueSession(tx, d.signer, player, rules);
      });
      // An upgraded guest got its initial currency when it was created; it is reported, not granted again.
      return { ...session, grants: { initialCurrency: rules.initial_currency, welcomeBonus: rules.welcome_bonus, starterChestId } };
    } catch (err) {
      if (isUniqueViolation(err, 'players_app_email')) throw emailTaken();
      throw err;
    }
  });
}
