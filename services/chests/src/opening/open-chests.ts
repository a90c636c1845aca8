import { isUniqueViolation, withTransaction, type CallContext, type OpeningView, type OutboxMessage, type Pool, type Queryable } from '@ccs/shared';
import type { ChestsDeps, ChestsFaults } from '../deps.js';
import { chestErrors } from '../errors.js';
import type { SeedCipher } from '../fairness/seed-cipher.js';
import { OPENING_KEY_INDEX, recordOpenings, type OpeningKind } from '../repositories/openings-repo.js';
import { readOpeningState, type ChestState, type OpeningState } from '../repositories/opening-state-repo.js';
import { defaultClientSeed, holdSeed, insertSeed } from '../repositories/seeds-repo.js';
import { ChestKeys, type KeyedChest } from '../payments/key-saga.js';
import type { PaymentTools } from '../payments/runner.js';
import type { DropTables, ResolvedChestType } from './drop-tables.js';
import type { OneAtATime } from './one-at-a-time.js';
import { pointedAt, pointInBatch, pointInPath, type Pointer } from './pointer.js';
import { replayOf } from './replay.js';
import { grantOf, rollOpenings, type BannerToRoll, type ChestToRoll } from './roll-openings.js';
import { bannerAsRolled, bannerGroupOf, bannerInForce } from '../banners/banners.js';
import { readBannerStandings } from '../repositories/banners-repo.js';
import { storeBannerStandings } from './spark-points.js';

/** Who opens which chests: one (a single open, `GET|POST /chests/{id}/open`) or a batch of them. */
export interface OpenCommand {
  appId: string;
  playerId: string;
  /** The chests, in the order they roll; a single open lists one. */
  chestIds: string[];
  /** `one`: a single open (errors name the path's chest); `batch`: errors point at `/data/<i>/id`. Also the scope of the Idempotency-Key. */
  kind: OpeningKind;
  idempotencyKey?: string;
  /** Where the grants' consumers announce that they applied them (an AppliedNotices subject). */
  notify?: string;
}

/** What an opening needs besides the command. */
export interface OpeningTools extends PaymentTools, Pick<ChestsDeps, 'cache'> {
  pool: Pool;
  drops: DropTables;
  cipher: SeedCipher;
  /** Queues one player's openings in this process (see OneAtATime). */
  perPlayer: OneAtATime;
  faults: Pick<ChestsFaults, 'beforeOpeningWrite'>;
}

/** What step 1 produced: the openings and their grants to publish, or earlier openings replayed. */
export type Opened = { openings: OpeningView[]; replayed: true } | { openings: OpeningView[]; replayed: false; grants: OutboxMessage[] };

/** How often an opening reads and tries again when the player's pair moved on under it. */
const MAX_ATTEMPTS = 20;
/**
 * Tries without a lock before an opening locks the player's pair for its turn. Only replicas race
 * (a process queues a player's openings), but with no lock the loser of each race can keep losing
 * to another replica's queue: a burst of 60 openings over two replicas once lost 20 times in a row.
 */
const OPTIMISTIC_ATTEMPTS = 3;

/**
 * THE opening pipeline, for one chest or a batch of them (docs/architecture.md, "Opening a chest"):
 * 1. an Idempotency-Key that opened these chests before answers with those openings (`replayed`):
 *    found when a chest reads as opened, before a key chest's key is taken, or when the write
 *    meets the key's unique index (nothing written); a fresh key costs no look-up;
 * 2. `readOpeningState` reads the chests, the caller's seed pair and pity counters, without a lock:
 *    404 unknown, 403 not owned, already opened (or the keyed twin's replay), locked, in order;
 * 3. the keys of key-required chests are taken (the compliance gate first, one debit per chest);
 * 4. ONE roll of all chests (`rollOpenings`), ONE write (`recordOpenings`: nonce compare-and-set,
 *    chests consumed, openings, grants in the outbox, pity counters, in one statement).
 * If the nonce moved (another replica's opening, or a seed rotation) nothing was written: read
 * again and retry. After OPTIMISTIC_ATTEMPTS lost compare-and-sets the try locks the pair first
 * (holdSeed), so it cannot lose again. Of concurrent openings of one chest exactly one wins.
 */
export async function openChests(tools: OpeningTools, cmd: OpenCommand, ctx: CallContext): Promise<Opened> {
  const point = cmd.kind === 'batch' ? pointInBatch : pointInPath;
  refuseDuplicates(cmd.chestIds);
  await tools.cipher.ready();
  const keys = new ChestKeys(tools, cmd, ctx, point);
  let outcome: Written | { opened: number } | Opened;
  try {
    outcome = await tools.perPlayer.run(`${cmd.appId}:${cmd.playerId}`, () => turns(tools, cmd, keys, point, ctx));
  } catch (err) {
    // Whatever failed after a key was taken, the keys go back (a no-op once refunded).
    await keys.refund();
    // The key opened other chests (concurrently, or before): nothing was written.
    if (cmd.idempotencyKey && isUniqueViolation(err, OPENING_KEY_INDEX)) {
      const replayed = await replayOf(tools.pool, cmd);
      if (replayed) return replayed;
      throw cmd.kind === 'batch' ? chestErrors.batchKeyReused() : chestErrors.idempotencyKeyReused();
    }
    throw err;
  }
  if ('replayed' in outcome) return outcome;
  if ('grants' in outcome) return { openings: outcome.openings, grants: outcome.grants, replayed: false };
  // A chest opened meanwhile (maybe by a keyed twin queued just before): its replay, else 403.
  await keys.refund();
  const replayed = cmd.idempotencyKey ? await replayOf(tools.pool, cmd) : undefined;
  if (replayed) return replayed;
  return point(outcome.opened, () => Promise.reject(chestErrors.chestAlreadyOpened()));
}

/** Openings written, with their grants. */
interface Written {
  openings: OpeningView[];
  grants: OutboxMessage[];
}

/** 422 `duplicate_chest` when a chest is listed twice (ids arrive lower-cased by the contract). */
function refuseDuplicates(chestIds: string[]): void {
  const seen = new Map<string, number>();
  chestIds.forEach((id, i) => {
    if (seen.has(id)) throw pointedAt(i, chestErrors.duplicateChest(seen.get(id)));
    seen.set(id, i);
  });
}

/**
 * The one retry loop: read, check, take the keys, roll and write, until written or a chest is found
 * opened (`{ opened: index }`); 503 `opening_contended` after MAX_ATTEMPTS.
 */
async function turns(
  tools: OpeningTools,
  cmd: OpenCommand,
  keys: ChestKeys,
  point: Pointer,
  ctx: CallContext,
): Promise<Written | { opened: number } | Opened> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const state = await readOpeningState(tools.pool, cmd.appId, cmd.playerId, cmd.chestIds);
    const checked = await checkChests(cmd, state, point);
    if ('opened' in checked) return checked;
    // Before a key is debited, a key that opened before answers with its openings (else its reuse
    // would debit and refund a key); without keys the write itself refuses a used key.
    const replayed = attempt === 1 && checked.keyed.length && cmd.idempotencyKey ? await replayOf(tools.pool, cmd) : undefined;
    if (replayed) return replayed;
    await keys.take(checked.keyed);
    if (!state.seed) {
      // The player's first use of a seed pair: commit one, then read again.
      await insertSeed(tools.pool, tools.cipher, cmd.appId, cmd.playerId, defaultClientSeed());
      continue;
    }
    // Drop tables resolved here, from memory or the pool, with no connection held (nor under the lock).
    const chests: ChestToRoll[] = [];
    const inForce = new Map<string, ReturnType<typeof bannerInForce>>();
    for (const c of checked.chests) {
      const resolved = await tools.drops.resolveType(cmd.appId, c.chestTypeId, c.contentVersion);
      const banner = c.banner ? await bannerToRoll(tools, cmd.appId, c.banner, resolved, inForce) : undefined;
      chests.push({ chestId: c.chestId, resolved, ...(banner ? { banner } : {}) });
    }
    if (tools.faults.beforeOpeningWrite) await tools.faults.beforeOpeningWrite(cmd.playerId, attempt);
    const done = await writeTurn(tools, cmd, keys, { state: { ...state, seed: state.seed }, chests, locking: attempt > OPTIMISTIC_ATTEMPTS }, ctx);
    if (done) return done;
  }
  throw chestErrors.openingContended();
}

/**
 * The checks of every chest, in the request's order: 404 unknown, 403 not the caller's, opened
 * (answered by the caller: replay or 403), 403 locked. Returns the chests in order and those
 * that need a key (a batch may hold several: each takes its own key).
 */
async function checkChests(
  cmd: OpenCommand,
  state: OpeningState,
  point: Pointer,
): Promise<{ chests: ChestState[]; keyed: KeyedChest[] } | { opened: number }> {
  const chests: ChestState[] = [];
  const keyed: KeyedChest[] = [];
  for (const [index, chestId] of cmd.chestIds.entries()) {
    const c = state.chests.get(chestId);
    if (!c) return point(index, () => Promise.reject(chestErrors.chestNotFound()));
    if (c.playerId !== cmd.playerId) return point(index, () => Promise.reject(chestErrors.chestNotOwned()));
    if (c.opened) return { opened: index };
    if (c.locked) return point(index, () => Promise.reject(chestErrors.chestLocked(c.locked!.unlocksAt)));
    chests.push(c);
    if (c.requiresKey) keyed.push({ index, chestId, requiresKey: c.requiresKey });
  }
  return { chests, keyed };
}

/** What one try writes from: the state read, the chests to roll, and whether it takes the lock. */
interface Turn {
  state: OpeningState & { seed: NonNullable<OpeningState['seed']> };
  chests: ChestToRoll[];
  locking: boolean;
}

/**
 * One try of the write: rolls from the state and records it (recordOpenings), or undefined when the
 * pair moved on (nothing written). Without keys or the lock it is the one statement alone; else one
 * transaction: the keys' debits completed (only while still pending), and after OPTIMISTIC_ATTEMPTS
 * lost compare-and-sets the pair locked first and the state read again, so this try cannot lose.
 */
async function writeTurn(tools: OpeningTools, cmd: OpenCommand, keys: ChestKeys, turn: Turn, ctx: CallContext): Promise<Written | undefined> {
  const serverSeed = await tools.cipher.decrypt(turn.state.seed.serverSeedEncrypted);
  const bannered = turn.chests.filter((c) => c.banner).map((c) => c.banner!);
  const write = async (db: Queryable, state: Turn['state']): Promise<Written | undefined> => {
    // A banner pull's standing is read in the write's transaction: the nonce's compare-and-set proves it current (only openings move it).
    const standings = bannered.length
      ? await readBannerStandings(db, cmd.appId, cmd.playerId, [...new Set(bannered.map((b) => b.group))])
      : undefined;
    const rolled = rollOpenings(turn.chests, state.seed, serverSeed, state.counters, standings);
    const grants = rolled.openings.map((o) => grantOf(o, cmd, ctx));
    const owner = { appId: cmd.appId, playerId: cmd.playerId, seedId: state.seed.id, nonce: state.seed.nextNonce };
    const key = cmd.idempotencyKey ? { key: { kind: cmd.kind, value: cmd.idempotencyKey } } : {};
    if (!(await recordOpenings(db, { ...owner, ...key }, rolled.openings, grants, rolled.counters))) return undefined;
    // Each banner opening's spark points after it, as the standing stored them (a spark exchange may take some meanwhile).
    const openings = rolled.banners.length ? await storeBannerStandings(db, cmd, rolled.banners, turn.chests, rolled.openings) : rolled.openings;
    return { openings, grants };
  };
  if (!keys.any && !turn.locking && !bannered.length) return write(tools.pool, turn.state);
  return withTransaction(tools.pool, async (tx) => {
    await keys.complete(tx);
    const at = turn.locking ? await lockedState(tx, cmd, turn.state) : turn.state;
    const done = at && (await write(tx, at));
    if (!done) throw new RetryOpening();
    return done;
  }).catch((err) => {
    if (err instanceof RetryOpening) return undefined;
    throw err;
  });
}

/**
 * The opening's state read again under the lock of the pair read before (holdSeed), or undefined
 * when the pair was rotated, a chest opened, or a chest's rules changed meanwhile: then read afresh.
 */
async function lockedState(tx: Queryable, cmd: OpenCommand, before: Turn['state']): Promise<Turn['state'] | undefined> {
  if (!(await holdSeed(tx, before.seed.id))) return undefined;
  const now = await readOpeningState(tx, cmd.appId, cmd.playerId, cmd.chestIds);
  if (now.seed?.id !== before.seed.id) return undefined;
  for (const [id, was] of before.chests) {
    const c = now.chests.get(id);
    if (!c || c.opened || c.playerId !== cmd.playerId || c.chestTypeId !== was.chestTypeId || c.contentVersion !== was.contentVersion)
      return undefined;
  }
  return { ...now, seed: now.seed };
}

/**
 * The banner a banner pull's chest opens as: its rules in force now (the odds change notice
 * period holds a change of them), looked up once per slug per try (`inForce`), with their version
 * for the opening's record; for a banner never logged, as bannerAsRolled finds it. None (an
 * ordinary opening) when the banner is gone or now pulls another chest type.
 */
async function bannerToRoll(
  tools: OpeningTools,
  appId: string,
  slug: string,
  resolved: ResolvedChestType,
  inForce: Map<string, ReturnType<typeof bannerInForce>>,
): Promise<BannerToRoll | undefined> {
  if (!inForce.has(slug)) inForce.set(slug, bannerInForce(tools, appId, slug));
  const logged = await inForce.get(slug)!;
  const content = logged?.content ?? (await bannerAsRolled(tools, appId, slug, resolved.content));
  if (!content || content.chest !== resolved.type.slug) return undefined;
  return { id: content.slug, group: bannerGroupOf(content), rules: content, ...(logged ? { rulesVersion: logged.rulesVersion } : {}) };
}

/** Rolls a try's transaction back to read and try again (the nonce moved). */
class RetryOpening extends Error {}
