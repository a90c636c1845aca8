import { randomUUID } from 'node:crypto';
import { appOf, CreateGuest, endpoint, isUniqueViolation, withTransaction, type ReplyOf } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { playerRulesOf } from '../repositories/apps-repo.js';
import { findGuestKey, insertGuestKey, type GuestKeyRecord } from '../repositories/guest-keys-repo.js';
import { findPlayer, insertPlayer } from '../repositories/players-repo.js';
import { planWelcomeGrants } from '../saga/welcome-grants.js';
import { runRegistration } from '../saga/registration-saga.js';
import { issueSession } from '../tokens/issue-session.js';
import { playerErrors } from '../errors.js';

type Reply = ReplyOf<typeof CreateGuest>;

const keyReused = playerErrors.guestKeyReused;

/**
 * Creates an anonymous player with tokens, its initial currency and a starter chest. The welcome
 * bonus comes when the guest registers (reported here as zero amounts).
 *
 * With an Idempotency-Key, a retry within IDEMPOTENCY_KEY_TTL_HOURS answers like the first: the
 * same guest and grants, a new session (a new refresh-token family), `replayed`. The key then
 * works as a credential of that guest for the window, as a device id does, so a client keeps it
 * as it keeps the refresh token. Once the guest has registered, the key no longer signs anyone
 * in: 409 `idempotency_key_reused`.
 */
export function createGuestEndpoint(d: PlayersDeps) {
  const ttlHours = d.config.IDEMPOTENCY_KEY_TTL_HOURS;

  async function replay(appId: string, first: GuestKeyRecord): Promise<Reply> {
    const player = await findPlayer(d.pool, appId, first.playerId);
    if (!player?.isAnonymous) throw keyReused();
    const rules = await playerRulesOf(d.pool, appId);
    const session = await withTransaction(d.pool, (tx) => issueSession(tx, d.signer, player, rules));
    return { ...session, grants: first.grants, replayed: true };
  }

  return endpoint(CreateGuest, async (req, ctx) => {
    const appId = appOf(ctx);
    const key = req.idempotencyKey;
    const first = key ? await findGuestKey(d.pool, appId, key, ttlHours) : undefined;
    if (first) return replay(appId, first);

    const rules = await playerRulesOf(d.pool, appId);
    const playerId = randomUUID();
    const starterChestId = randomUUID();
    const noBonus = Object.fromEntries(Object.keys(rules.welcome_bonus).map((code) => [code, 0]));
    const grants = { initialCurrency: rules.initial_currency, welcomeBonus: noBonus, starterChestId };
    const plan = planWelcomeGrants('guest', rules, { appId, playerId, starterChestId });
    try {
      const session = await runRegistration(d, plan, ctx, async (tx) => {
        const player = await insertPlayer(tx, { id: playerId, appId, email: null, passwordHash: null, starterChestId });
        if (key) await insertGuestKey(tx, appId, key, { playerId, grants }, ttlHours);
        return issueSession(tx, d.signer, player, rules);
      });
      return { ...session, grants };
    } catch (err) {
      // A concurrent request with the same key committed first: this is its retry.
      if (!key || !isUniqueViolation(err, 'guest_keys_pkey')) throw err;
      const winner = await findGuestKey(d.pool, appId, key, ttlHours);
      if (!winner) throw err;
      return replay(appId, winner);
    }
  });
}
