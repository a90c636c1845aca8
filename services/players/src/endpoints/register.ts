import { randomUUID } from 'node:crypto';
import {
  AppError,
  appOf,
  endpoint,
  isUniqueViolation,
  optionalCallerOf,
  RegisterPlayer,
  withTransaction,
  type CallContext,
  type ReplyOf,
  type RequestOf,
} from '@ccs/shared';
import type { PasswordChecks } from '../credentials/passwords.js';
import { registrationRuleErrors } from '../credentials/registration-rules.js';
import { checkComplianceAttributes } from '../profile/compliance-attributes.js';
import { applyOwnChange } from '../profile/declared-profile.js';
import type { PlayersDeps } from '../deps.js';
import { playerRulesOf, type PlayerRules } from '../repositories/apps-repo.js';
import { findPlayer, findPlayerByEmail, insertPlayer, upgradeToRegistered, type PlayerRecord } from '../repositories/players-repo.js';
import { findRegistrationKey, insertRegistrationKey, type RegistrationKeyRecord } from '../repositories/registration-keys-repo.js';
import { planWelcomeGrants } from '../saga/welcome-grants.js';
import { runRegistration } from '../saga/registration-saga.js';
import { issueSession } from '../tokens/issue-session.js';
import { playerErrors } from '../errors.js';

type Request = RequestOf<typeof RegisterPlayer>;
type Reply = ReplyOf<typeof RegisterPlayer>;
/** A retry of a keyed registration: the first one's player and grants. */
type Retry = { player: PlayerRecord; grants: RegistrationKeyRecord['grants'] };
/** What the checks in a password slot found: a retry of a keyed registration, or what a new one needs. */
type Checked = { retryOf: Retry } | { guest: PlayerRecord | undefined; rules: PlayerRules; passwordHash: string };

const { emailTaken, alreadyRegistered, registrationKeyReused: keyReused } = playerErrors;

/**
 * Registration: checks the form rules and the optional country and birth year (422 per failing
 * rule), then creates the player with an argon2id hash, or, when a guest's token calls, upgrades
 * that guest in place. Grants go out as the registration saga (saga/registration-saga.ts).
 *
 * The lookups and the hash take one of the bounded password slots (503 `overloaded` past the
 * bound, before anything is done). With an Idempotency-Key, a retry of the registration made
 * with it (same email, password and caller, within IDEMPOTENCY_KEY_TTL_HOURS) answers like the
 * first: the same player and grants, a new session, `replayed`. Any other request with that key
 * is 409 `idempotency_key_reused`. Without a key, a registered email stays 409 `email_taken`.
 */
export function registerEndpoint(d: PlayersDeps) {
  return endpoint(RegisterPlayer, async (req, ctx) => {
    const appId = appOf(ctx);
    const profile = checkComplianceAttributes(req);
    const errors = [...registrationRuleErrors(req), ...profile.errors];
    if (errors.length) throw AppError.many(errors);
    const checked = await d.hasher.withSlot((pw) => checkInSlot(d, pw, appId, req, ctx));
    if ('retryOf' in checked) return replay(d, appId, checked.retryOf);

    const { guest, rules, passwordHash } = checked;
    const key = req.idempotencyKey;
    const playerId = guest?.id ?? randomUUID();
    const starterChestId = guest?.starterChestId ?? randomUUID();
    // An upgraded guest got its initial currency when it was created; it is reported, not granted again.
    const grants = { initialCurrency: rules.initial_currency, welcomeBonus: rules.welcome_bonus, starterChestId };
    const plan = planWelcomeGrants(guest ? 'upgrade' : 'registration', rules, { appId, playerId, starterChestId, email: req.email });
    try {
      const session = await runRegistration(d, plan, ctx, async (tx) => {
        // A guest's declared profile follows a player's rules (profile/declared-profile.ts): upgrading
        // cannot move a locked country or an earlier birth year.
        if (guest) await applyOwnChange(d, tx, appId, playerId, profile.attributes);
        const player = guest
          ? await upgradeToRegistered(tx, appId, playerId, { email: req.email, passwordHash })
          : await insertPlayer(tx, { id: playerId, appId, email: req.email, passwordHash, starterChestId, ...profile.attributes });
        if (!player) throw alreadyRegistered();
        const record = { playerId, email: req.email, callerId: optionalCallerOf(ctx) ?? null, grants };
        if (key) await insertRegistrationKey(tx, appId, key, record, d.config.IDEMPOTENCY_KEY_TTL_HOURS);
        return issueSession(tx, d.signer, player, rules);
      });
      return { ...session, grants };
    } catch (err) {
      const conflict = conflictOf(err);
      if (!conflict) throw err;
      // A concurrent request with the same key committed first: this may be its retry.
      const retry = key ? await d.hasher.withSlot((pw) => retryOf(d, pw, appId, req, ctx)) : undefined;
      if (!retry) throw conflict;
      return replay(d, appId, retry);
    }
  });
}

/**
 * The keyed registration this request retries, if any: its key found (within
 * IDEMPOTENCY_KEY_TTL_HOURS) with the same email, the same calling token's player, and a password
 * that verifies against the player's hash; 409 `idempotency_key_reused` when the key was used
 * otherwise. The password is always verified, so the answer takes as long whichever part differs.
 * In a password slot.
 */
async function retryOf(d: PlayersDeps, pw: PasswordChecks, appId: string, req: Request, ctx: CallContext): Promise<Retry | undefined> {
  const key = req.idempotencyKey;
  const first = key ? await findRegistrationKey(d.pool, appId, key, d.config.IDEMPOTENCY_KEY_TTL_HOURS) : undefined;
  if (!first) return undefined;
  const player = await findPlayer(d.pool, appId, first.playerId);
  let passwordMatches = false;
  if (player?.passwordHash) passwordMatches = await pw.verify(player.passwordHash, req.password);
  else await pw.verifyAgainstNothing(req.password);
  if (!player || !passwordMatches || first.email !== req.email || first.callerId !== (optionalCallerOf(ctx) ?? null)) throw keyReused();
  return { player, grants: first.grants };
}

/** The answer to a retry: the first registration's player and grants, with a new session (a new refresh-token family). */
async function replay(d: PlayersDeps, appId: string, retry: Retry): Promise<Reply> {
  const rules = await playerRulesOf(d.pool, appId);
  const session = await withTransaction(d.pool, (tx) => issueSession(tx, d.signer, retry.player, rules));
  return { ...session, grants: retry.grants, replayed: true };
}

/** In a password slot: a retry of a keyed registration, or the guest, rules and hash a new one needs. */
async function checkInSlot(d: PlayersDeps, pw: PasswordChecks, appId: string, req: Request, ctx: CallContext): Promise<Checked> {
  const retry = await retryOf(d, pw, appId, req, ctx);
  if (retry) return { retryOf: retry };
  const caller = optionalCallerOf(ctx);
  const guest = caller ? await findPlayer(d.pool, appId, caller) : undefined;
  if (caller && !guest) throw playerErrors.tokenNamesNoPlayer();
  if (guest && !guest.isAnonymous) throw alreadyRegistered();
  // Checked first to spare the hashing; the unique index still decides races.
  // A keyed twin that committed between the key lookup above and this check: this is its retry.
  if (await findPlayerByEmail(d.pool, appId, req.email)) {
    const late = await retryOf(d, pw, appId, req, ctx);
    if (late) return { retryOf: late };
    throw emailTaken();
  }
  const rules = await playerRulesOf(d.pool, appId);
  return { guest, rules, passwordHash: await pw.hash(req.password) };
}

/** The conflict a failed commit means to the caller (email taken, key reused, already registered), or undefined. */
function conflictOf(err: unknown): AppError | undefined {
  if (isUniqueViolation(err, 'players_app_email')) return emailTaken();
  if (isUniqueViolation(err, 'registration_keys_pkey')) return keyReused();
  return err instanceof AppError && err.code === 'already_registered' ? err : undefined;
}
