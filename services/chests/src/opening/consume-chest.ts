import {
  AppError,
  fairRandom,
  isUniqueViolation,
  nextCounter,
  OpeningGranted,
  outboxMessage,
  rollTable,
  tableAtCounter,
  withTransaction,
  type CallContext,
  type OpeningView,
  type OutboxMessage,
  type Pool,
  type Queryable,
} from '@ccs/shared';
import { checkPaidUseNow } from '../compliance/gate.js';
import type { ChestsDeps, ChestsFaults } from '../deps.js';
import { chestErrors } from '../errors.js';
import type { SeedCipher } from '../fairness/seed-cipher.js';
import { moveChestDebit } from '../repositories/chest-debits-repo.js';
import { findOpeningByKey, recordOpening } from '../repositories/openings-repo.js';
import { readOpeningState, type OpeningState } from '../repositories/opening-state-repo.js';
import { defaultClientSeed, holdSeed, insertSeed, type ActiveSeed } from '../repositories/seeds-repo.js';
import type { DropTables, ResolvedChestType } from './drop-tables.js';
import type { OneAtATime } from './one-at-a-time.js';
import { debitKey, keyErrors, refundKey, type DebitTools } from './chest-debit-saga.js';

/** Who opens which chest, and the id the opening (and its grant message) will have. */
export interface OpenCommand {
  appId: string;
  playerId: string;
  chestId: string;
  openingId: string;
  idempotencyKey?: string;
  /** Where the grant's consumers announce that they applied it (an AppliedNotices subject). */
  notify?: string;
}

/** What an opening needs besides the command. */
export interface OpeningTools extends DebitTools, Pick<ChestsDeps, 'cache'> {
  pool: Pool;
  drops: DropTables;
  cipher: SeedCipher;
  /** Queues one player's openings in this process (see OneAtATime). */
  perPlayer: OneAtATime;
  faults: Pick<ChestsFaults, 'beforeOpeningWrite'>;
}

/** What step 1 produced: the opening, whether it is an earlier one replayed, and the grant to publish. */
export type Consumed = { opening: OpeningView; replayed: true } | { opening: OpeningView; replayed: false; grant: OutboxMessage };

/** The pity group of a chest type: its rules' group, else the type's own slug. */
export const pityGroupOf = (type: Pick<ResolvedChestType['type'], 'rules' | 'slug'>): string | undefined =>
  type.rules.pity && (type.rules.pity.group ?? type.slug);

/** How often an opening reads and tries again when the player's pair moved on under it. */
const MAX_ATTEMPTS = 20;
/**
 * Tries without a lock before an opening locks the player's pair for its turn. Only replicas race
 * (a process queues a player's openings), but with no lock the loser of each race can keep losing
 * to another replica's queue: a burst of 60 openings over two replicas once lost 20 times in a row.
 */
const OPTIMISTIC_ATTEMPTS = 3;

/**
 * Step 1 of the opening saga: 404 when the app has no such chest, 403 when another player owns it
 * or it is already opened; else two statements and no transaction:
 * 1. `readOpeningState`: the chest, its owner's active seed pair (docs/fairness.md) and the pity
 *    counter of its group, without a lock;
 * 2. roll with the HMAC-SHA256 stream of (server seed, client seed, nonce), from the drop table as
 *    the counter adjusts it (pity.ts);
 * 3. `recordOpening`: if the pair's nonce is still the one read (compare-and-set), advance it,
 *    consume the chest, record the opening with its inputs and pity state, write the grant to the
 *    outbox and store the counter, all in one statement.
 * If the nonce moved (another opening of the player, on another replica, or a seed rotation) or
 * the chest was opened meanwhile, nothing was written: read again and retry. In this process a
 * player's openings queue (OneAtATime), so retries come only from other replicas; after
 * OPTIMISTIC_ATTEMPTS of them the try locks the pair first (holdSeed), so it cannot lose again. Of concurrent
 * openings of one chest exactly one wins; the others answer as for an opened chest. An already
 * opened chest asked for again with the Idempotency-Key of its opening returns that opening
 * (`replayed`). The drop table is resolved between the statements, from memory or from the pool,
 * with no connection held.
 */
export async function consumeChest(tools: OpeningTools, cmd: OpenCommand, ctx: CallContext): Promise<Consumed> {
  const { pool, drops, cipher, perPlayer } = tools;
  await cipher.ready();
  let outcome: { opening: OpeningView; grant: OutboxMessage } | 'opened' | undefined;
  /** The key debit of this opening, once taken (key-required chests). */
  let keyDebit: string | undefined;
  try {
    outcome = await perPlayer.run(`${cmd.appId}:${cmd.playerId}`, async () => {
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        const state = await readOpeningState(pool, cmd.appId, cmd.chestId);
        if (!state) throw chestErrors.chestNotFound();
        if (state.playerId !== cmd.playerId) throw chestErrors.chestNotOwned();
        if (state.opened) {
          // Opened meanwhile (by another replica): the key taken for this attempt goes back.
          if (keyDebit) await refundKey(tools, keyDebit, ctx);
          return 'opened' as const;
        }
        if (state.locked) throw chestErrors.chestLocked(state.locked.unlocksAt);
        if (state.requiresKey && !keyDebit) {
          // A key of a paid currency is a paid way to random content: the compliance gate first.
          await checkPaidUseNow(tools, cmd.appId, state.requiresKey.currency, 'key', ctx);
          keyDebit = await debitKey(tools, { appId: cmd.appId, playerId: cmd.playerId, chestId: cmd.chestId, ...state.requiresKey }, ctx);
        }
        if (!state.seed) {
          // The player's first use of a seed pair: commit one, then read again.
          await insertSeed(pool, cipher, cmd.appId, cmd.playerId, defaultClientSeed());
          continue;
        }
        const seed = state.seed;
        const resolved = await drops.resolveType(cmd.appId, state.chestTypeId, state.contentVersion);
        const serverSeed = await cipher.decrypt(seed.serverSeedEncrypted);
        /** Rolls at `at` (the state read: its counter) and `pair` (its nonce), and records it if the pair is still there. */
        const record = async (db: Queryable, at: OpeningState, pair: ActiveSeed) => {
          const opening = rollOpening(resolved, at, pair, serverSeed, cmd);
          const grant = grantOf(opening, cmd, ctx);
          const inputs = { seedId: pair.id, nonce: pair.nextNonce, pityHard: resolved.type.rules.pity?.hard };
          const ownerFields = { ...opening, appId: cmd.appId, playerId: cmd.playerId, idempotencyKey: cmd.idempotencyKey };
          return (await recordOpening(db, ownerFields, inputs, grant)) ? { opening, grant } : undefined;
        };
        const locking = attempt > OPTIMISTIC_ATTEMPTS;
        if (tools.faults.beforeOpeningWrite) await tools.faults.beforeOpeningWrite(cmd.playerId, attempt);
        if (!keyDebit && !locking) {
          const done = await record(pool, state, seed);
          if (done) return done;
          continue;
        }
        // One transaction: with a key, its debit is marked completed in it, only while still pending
        // (a sweeper that found it stale has refunded it: then this opening must not happen); after
        // OPTIMISTIC_ATTEMPTS lost compare-and-sets, the pair is locked first, so this try cannot lose.
        const taken = keyDebit;
        const done = await withTransaction(pool, async (tx) => {
          if (taken && !(await moveChestDebit(tx, taken, ['pending'], 'completed'))) throw keyErrors.interrupted();
          const at = locking ? await lockedState(tx, cmd, state, seed) : state;
          const recorded = at?.seed && (await record(tx, at, at.seed));
          if (!recorded) throw new RetryOpening();
          return recorded;
        }).catch((err) => {
          if (err instanceof RetryOpening) return undefined;
          throw err;
        });
        if (done) return done;
      }
      if (keyDebit) await refundKey(tools, keyDebit, ctx);
      throw chestErrors.openingContended();
    });
  } catch (err) {
    // Whatever failed after the key was taken, the key goes back (a no-op once it is refunded).
    if (keyDebit && !(err instanceof AppError && err.code === 'opening_interrupted')) await refundKey(tools, keyDebit, ctx);
    // The key already opened another chest (concurrently, or before): nothing was written.
    if (isUniqueViolation(err, 'openings_idempotency')) return openedBefore(pool, cmd, chestErrors.idempotencyKeyReused());
    throw err;
  }
  if (outcome === 'opened' || !outcome) return openedBefore(pool, cmd);
  return { ...outcome, replayed: false };
}

/**
 * The opening's state read again under the lock of the pair read before (holdSeed), or undefined
 * when the pair was rotated, the chest opened, or its rules changed meanwhile: then read afresh.
 */
async function lockedState(tx: Queryable, cmd: OpenCommand, before: OpeningState, pair: ActiveSeed): Promise<OpeningState | undefined> {
  if (!(await holdSeed(tx, pair.id))) return undefined;
  const now = await readOpeningState(tx, cmd.appId, cmd.chestId);
  if (now?.seed?.id !== pair.id || now.opened || now.playerId !== cmd.playerId) return undefined;
  return now.chestTypeId === before.chestTypeId && now.contentVersion === before.contentVersion ? now : undefined;
}

/** One roll of a chest at the player's pity counter, with the random stream of their seed pair and nonce. */
function rollOpening(resolved: ResolvedChestType, state: OpeningState, seed: ActiveSeed, serverSeed: string, cmd: OpenCommand): OpeningView {
  const group = pityGroupOf(resolved.type);
  const rule = resolved.table.pity && resolved.type.rules.pity;
  const before = state.opensSince;
  const random = fairRandom(serverSeed, seed.clientSeed, seed.nextNonce);
  const items = rollTable(tableAtCounter(resolved.table, before), random).map((it) => {
    const c = resolved.collectibles.get(it.collectibleId)!;
    return { ...it, name: c.name, description: c.description, images: c.images };
  });
  return {
    openingId: cmd.openingId,
    chestId: state.chestId,
    chestTypeId: resolved.type.id,
    openedAt: new Date().toISOString(),
    items,
    experience: items.reduce((sum, it) => sum + (resolved.experience.get(it.rarity) ?? 0), 0),
    rulesVersion: resolved.type.contentVersion,
    fairness: { serverSeedHash: seed.serverSeedHash, clientSeed: seed.clientSeed, nonce: seed.nextNonce },
    ...(group && rule
      ? {
          pity: {
            group,
            rarity: rule.rarity,
            opensSinceBefore: before,
            opensSinceAfter: nextCounter(resolved.table, before, items),
            triggered: before >= rule.hard - 1,
          },
        }
      : {}),
  };
}

/** The durable grant of an opening: collections adds the items, players the experience. */
export function grantOf(opening: OpeningView, cmd: Pick<OpenCommand, 'appId' | 'playerId' | 'notify'>, ctx: CallContext): OutboxMessage {
  return outboxMessage(
    OpeningGranted,
    opening.openingId,
    {
      openingId: opening.openingId,
      appId: cmd.appId,
      playerId: cmd.playerId,
      chestTypeId: opening.chestTypeId,
      openedAt: opening.openedAt,
      experience: opening.experience,
      rulesVersion: opening.rulesVersion,
      items: opening.items.map((it) => ({ slot: it.slot, collectibleId: it.collectibleId, collectionId: it.collectionId, rarity: it.rarity })),
    },
    ctx,
    { notify: cmd.notify },
  );
}

/**
 * A chest already opened: the opening made with the caller's Idempotency-Key when that is the one
 * that opened this chest (a retry, maybe concurrent), else `refusal` (403 chest_already_opened).
 */
async function openedBefore(pool: Pool, cmd: OpenCommand, refusal = chestErrors.chestAlreadyOpened()): Promise<Consumed> {
  const first = cmd.idempotencyKey ? await findOpeningByKey(pool, cmd.appId, cmd.playerId, cmd.idempotencyKey) : undefined;
  if (first && first.chestId === cmd.chestId) return { opening: first, replayed: true };
  if (first) throw chestErrors.idempotencyKeyReused();
  throw refusal;
}

/** Rolls a key-required opening's transaction back to read and try again (the nonce moved). */
class RetryOpening extends Error {}
