import { randomUUID } from 'node:crypto';
import {
  AppError,
  fairRandom,
  isUniqueViolation,
  nextCounter,
  rollTable,
  tableAtCounter,
  withTransaction,
  type CallContext,
  type OpeningView,
  type OutboxMessage,
  type Pool,
  type PoolClient,
} from '@ccs/shared';
import { checkPaidUseNow } from '../compliance/gate.js';
import { chestErrors } from '../errors.js';
import { findBatch, readBatchChests, readPlayerRollState, type BatchChest } from '../repositories/batch-repo.js';
import { listOpeningsByIds } from '../repositories/openings-repo.js';
import { defaultClientSeed, holdSeed, insertSeed, type ActiveSeed } from '../repositories/seeds-repo.js';
import { grantOf, pityGroupOf, type OpeningTools } from './consume-chest.js';
import type { ResolvedChestType } from './drop-tables.js';

/** How often a batch reads and tries again when the player's pair moved on under it. */
const MAX_ATTEMPTS = 20;
/** Tries without a lock before a batch locks the player's pair for its turn (as a single opening does: consume-chest.ts). */
const OPTIMISTIC_ATTEMPTS = 3;

/** What a batch produced: its openings and their grants, or an earlier batch replayed. */
export type BatchResult = { openings: OpeningView[]; replayed: true } | { openings: OpeningView[]; replayed: false; grants: OutboxMessage[] };

/** An error of one chest of the batch, pointing at it in the request document. */
function at(index: number, err: AppError): AppError {
  return AppError.many(err.errors.map((e) => ({ ...e, source: { pointer: `/data/${index}/id` } })));
}

/**
 * Opens `chestIds` for the caller, in order, all or nothing (docs/content.md, "Batch open"): every
 * chest is checked first (404, 403 not owned or already opened, 422 listed twice), the openings
 * are rolled one after the other with consecutive nonces and the pity counters carried through,
 * and ONE transaction advances the nonce by compare-and-set, consumes every chest, records the
 * openings and writes one grant message each. A chest opened meanwhile rolls the transaction back
 * and the batch is read again (and then refused, naming it).
 */
export async function openBatch(
  tools: OpeningTools,
  cmd: { appId: string; playerId: string; chestIds: string[]; idempotencyKey?: string; notify?: string },
  ctx: CallContext,
): Promise<BatchResult> {
  const { pool, cipher, perPlayer } = tools;
  const seen = new Map<string, number>();
  cmd.chestIds.forEach((id, i) => {
    if (seen.has(id)) throw at(i, AppError.unprocessable('duplicate_chest', `This chest is listed twice (also at ${seen.get(id)}).`));
    seen.set(id, i);
  });
  if (cmd.idempotencyKey) {
    const first = await replayOf(pool, cmd);
    if (first) return first;
  }
  await cipher.ready();
  try {
    return await perPlayer.run(`${cmd.appId}:${cmd.playerId}`, async () => {
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        const chests = await readBatchChests(pool, cmd.appId, cmd.chestIds);
        for (const [i, id] of cmd.chestIds.entries()) {
          const c = chests.get(id);
          if (!c) throw at(i, chestErrors.chestNotFound());
          if (c.playerId !== cmd.playerId) throw at(i, chestErrors.chestNotOwned());
          if (c.keyCurrency) {
            // The compliance gate of a paid key answers first, as the chest's own opening would.
            await checkPaidUseNow(tools, cmd.appId, c.keyCurrency, 'key', ctx).catch((err: unknown) => {
              throw err instanceof AppError ? at(i, err) : err;
            });
            throw at(i, AppError.unprocessable('key_chest_in_batch', 'Chests that need a key open one at a time (POST /api/v1/chests/{id}/open).'));
          }
          if (c.opened) {
            // A keyed twin that ran just before (queued behind it here, or on another replica).
            const first = cmd.idempotencyKey ? await replayOf(pool, cmd) : undefined;
            if (first) return first;
            throw at(i, chestErrors.chestAlreadyOpened());
          }
          if (c.locked) throw at(i, chestErrors.chestLocked(c.locked.unlocksAt));
        }
        const state = await readPlayerRollState(pool, cmd.appId, cmd.playerId);
        if (!state.seed) {
          await insertSeed(pool, cipher, cmd.appId, cmd.playerId, defaultClientSeed());
          continue;
        }
        const ordered = cmd.chestIds.map((id) => chests.get(id)!);
        const seed = state.seed;
        const write = async (tx: PoolClient, rolled: Rolled) => {
          const grants = rolled.openings.map((o) => grantOf(o, cmd, ctx));
          await writeBatch(tx, cmd, rolled.seed, rolled.openings, grants, rolled.hard);
          return { openings: rolled.openings, replayed: false as const, grants };
        };
        let turn: (tx: PoolClient) => Promise<BatchResult>;
        if (attempt <= OPTIMISTIC_ATTEMPTS) {
          // Rolled with no connection held (a drop table may load from the pool), written by compare-and-set.
          const rolled = await rollAll(tools, ordered, seed, state.counters, cmd);
          turn = (tx) => write(tx, rolled);
        } else {
          // Lost OPTIMISTIC_ATTEMPTS compare-and-sets to other replicas: lock the pair, read it again
          // and roll from it. The drop tables are resolved first, so rolling under the lock needs no
          // second connection.
          for (const c of ordered) await tools.drops.resolveType(cmd.appId, c.chestTypeId, c.contentVersion);
          turn = async (tx) => {
            if (!(await holdSeed(tx, seed.id))) throw new Retry();
            const now = await readPlayerRollState(tx, cmd.appId, cmd.playerId);
            if (now.seed?.id !== seed.id) throw new Retry();
            return write(tx, await rollAll(tools, ordered, now.seed, now.counters, cmd));
          };
        }
        if (tools.faults.beforeOpeningWrite) await tools.faults.beforeOpeningWrite(cmd.playerId, attempt);
        const done = await withTransaction(pool, turn).catch((err) => {
          if (err instanceof Retry) return undefined;
          throw err;
        });
        if (done) return done;
      }
      throw chestErrors.openingContended();
    });
  } catch (err) {
    // A concurrent batch with the same key committed first: answer as its retry.
    if (cmd.idempotencyKey && isUniqueViolation(err, 'opening_batches_pkey')) {
      const first = await replayOf(pool, cmd);
      if (first) return first;
    }
    throw err;
  }
}

/** The keyed batch this one retries, if any (409 when the key opened other chests). */
async function replayOf(
  pool: Pool,
  cmd: { appId: string; playerId: string; chestIds: string[]; idempotencyKey?: string },
): Promise<BatchResult | undefined> {
  const first = await findBatch(pool, cmd.appId, cmd.playerId, cmd.idempotencyKey!);
  if (!first) return undefined;
  if (first.chestIds.join() !== cmd.chestIds.join()) throw chestErrors.batchKeyReused();
  return { openings: await listOpeningsByIds(pool, cmd.appId, cmd.playerId, first.openingIds), replayed: true };
}

/** A batch rolled from one state of the player's pair: its openings and each pity group's hard limit. */
interface Rolled {
  seed: ActiveSeed;
  openings: OpeningView[];
  hard: Map<string, number>;
}

/** Rolls the chests in order: consecutive nonces, each pity group's counter carried from one to the next. */
async function rollAll(
  tools: OpeningTools,
  chests: BatchChest[],
  seed: ActiveSeed,
  counters: Map<string, number>,
  cmd: { appId: string },
): Promise<Rolled> {
  const serverSeed = await tools.cipher.decrypt(seed.serverSeedEncrypted);
  const counter = new Map(counters);
  const hard = new Map<string, number>();
  const openings: OpeningView[] = [];
  const openedAt = new Date().toISOString();
  for (const [i, chest] of chests.entries()) {
    const resolved: ResolvedChestType = await tools.drops.resolveType(cmd.appId, chest.chestTypeId, chest.contentVersion);
    const group = pityGroupOf(resolved.type);
    const rule = resolved.table.pity && resolved.type.rules.pity;
    const before = group ? (counter.get(group) ?? 0) : 0;
    const nonce = seed.nextNonce + i;
    const items = rollTable(tableAtCounter(resolved.table, before), fairRandom(serverSeed, seed.clientSeed, nonce)).map((it) => {
      const c = resolved.collectibles.get(it.collectibleId)!;
      return { ...it, name: c.name, description: c.description, images: c.images };
    });
    const after = nextCounter(resolved.table, before, items);
    if (group && rule) {
      counter.set(group, after);
      hard.set(group, rule.hard);
    }
    openings.push({
      openingId: randomUUID(),
      chestId: chest.id,
      chestTypeId: resolved.type.id,
      openedAt,
      items,
      experience: items.reduce((sum, it) => sum + (resolved.experience.get(it.rarity) ?? 0), 0),
      rulesVersion: resolved.type.contentVersion,
      fairness: { serverSeedHash: seed.serverSeedHash, clientSeed: seed.clientSeed, nonce },
      ...(group && rule
        ? { pity: { group, rarity: rule.rarity, opensSinceBefore: before, opensSinceAfter: after, triggered: before >= rule.hard - 1 } }
        : {}),
    });
  }
  return { seed, openings, hard };
}

/**
 * The batch's writes, in its one transaction: the nonce compare-and-set (n → n + count), every
 * chest consumed, the openings and their grants written, each pity group's final counter stored,
 * the key kept. Throws Retry, to roll it all back, when the pair moved on or a chest was opened
 * meanwhile.
 */
async function writeBatch(
  tx: PoolClient,
  cmd: { appId: string; playerId: string; chestIds: string[]; idempotencyKey?: string },
  seed: ActiveSeed,
  openings: OpeningView[],
  grants: OutboxMessage[],
  hard: Map<string, number>,
): Promise<void> {
  const k = openings.length;
  const nonced = await tx.query('UPDATE player_seeds SET next_nonce = $2 + $3 WHERE id = $1 AND next_nonce = $2 AND revealed_at IS NULL', [
    seed.id,
    seed.nextNonce,
    k,
  ]);
  if (nonced.rowCount !== 1) throw new Retry();
  const consumed = await tx.query(
    `UPDATE inventory_chests SET opened_at = $4 WHERE app_id = $1 AND player_id = $2 AND id = ANY($3::uuid[]) AND opened_at IS NULL`,
    [cmd.appId, cmd.playerId, cmd.chestIds, openings[0]!.openedAt],
  );
  if (consumed.rowCount !== k) throw new Retry();
  const rows = openings.map((o) => ({
    id: o.openingId,
    chest_id: o.chestId,
    chest_type_id: o.chestTypeId,
    content_version: o.rulesVersion,
    opened_at: o.openedAt,
    items: o.items,
    experience: o.experience,
    nonce: o.fairness!.nonce,
    pity: o.pity ?? null,
  }));
  await tx.query(
    `INSERT INTO openings (id, app_id, player_id, chest_id, chest_type_id, content_version, opened_at, items, experience, seed_id, nonce, pity)
     SELECT r.id, $1, $2, r.chest_id, r.chest_type_id, r.content_version, r.opened_at, r.items, r.experience, $4, r.nonce, r.pity
       FROM jsonb_to_recordset($3::jsonb) AS r(id uuid, chest_id uuid, chest_type_id uuid, content_version integer, opened_at timestamptz,
                                                items jsonb, experience integer, nonce integer, pity jsonb)`,
    [cmd.appId, cmd.playerId, JSON.stringify(rows), seed.id],
  );
  await tx.query(
    `INSERT INTO outbox (id, subject, payload, headers)
     SELECT r.id, r.subject, r.payload, r.headers FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, subject text, payload jsonb, headers jsonb)`,
    [JSON.stringify(grants)],
  );
  const finals = new Map<string, { opensSince: number; rarity: string }>();
  for (const o of openings) if (o.pity) finals.set(o.pity.group, { opensSince: o.pity.opensSinceAfter, rarity: o.pity.rarity });
  for (const [group, f] of finals) {
    await tx.query(
      `INSERT INTO pity_counters (app_id, player_id, pity_group, opens_since, rarity, hard) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (app_id, player_id, pity_group) DO UPDATE SET opens_since = EXCLUDED.opens_since, rarity = EXCLUDED.rarity, hard = EXCLUDED.hard, updated_at = now()`,
      [cmd.appId, cmd.playerId, group, f.opensSince, f.rarity, hard.get(group)],
    );
  }
  if (cmd.idempotencyKey) {
    await tx.query('INSERT INTO opening_batches (app_id, player_id, idempotency_key, chest_ids, opening_ids) VALUES ($1, $2, $3, $4, $5)', [
      cmd.appId,
      cmd.playerId,
      cmd.idempotencyKey,
      cmd.chestIds,
      openings.map((o) => o.openingId),
    ]);
  }
}

/** Rolls a batch's transaction back to read and try again. */
class Retry extends Error {}
