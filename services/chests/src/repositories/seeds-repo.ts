import { randomBytes, randomUUID } from 'node:crypto';
import { seedCommitment, type Queryable } from '@ccs/shared';
import type { SeedCipher } from '../fairness/seed-cipher.js';

/** A player's active seed pair, locked for one opening or change. */
export interface ActiveSeed {
  id: string;
  serverSeedHash: string;
  clientSeed: string;
  nextNonce: number;
  /** Encrypted; see SeedCipher. */
  serverSeedEncrypted: string;
  createdAt: Date;
}

interface SeedRow {
  id: string;
  server_seed_hash: string;
  client_seed: string;
  next_nonce: number;
  server_seed_encrypted: string;
  created_at: Date;
}

const COLUMNS = 'id, server_seed_hash, client_seed, next_nonce, server_seed_encrypted, created_at';
const toSeed = (r: SeedRow): ActiveSeed => ({
  id: r.id,
  serverSeedHash: r.server_seed_hash,
  clientSeed: r.client_seed,
  nextNonce: r.next_nonce,
  serverSeedEncrypted: r.server_seed_encrypted,
  createdAt: r.created_at,
});

/** A client seed chosen by the server when the player has not set one: 16 hex digits. */
export const defaultClientSeed = (): string => randomBytes(8).toString('hex');

/**
 * The player's active seed pair, locked (FOR UPDATE) until the transaction ends: the lock is what
 * serialises one player's openings, so nonces and pity counters never race. A player without one
 * gets a new pair first (a fresh 32-byte server seed, encrypted; its SHA-256 is the commitment).
 */
export async function lockActiveSeed(tx: Queryable, cipher: SeedCipher, appId: string, playerId: string): Promise<ActiveSeed> {
  const select = () =>
    tx.query<SeedRow>(`SELECT ${COLUMNS} FROM player_seeds WHERE app_id = $1 AND player_id = $2 AND revealed_at IS NULL FOR UPDATE`, [
      appId,
      playerId,
    ]);
  let r = await select();
  if (!r.rows[0]) {
    await insertSeed(tx, cipher, appId, playerId, defaultClientSeed());
    r = await select();
  }
  return toSeed(r.rows[0]!);
}

/**
 * Locks the active pair `seedId` until the transaction ends (false when it was rotated meanwhile).
 * An opening that lost its compare-and-set several times takes this turn: other replicas'
 * compare-and-sets on the pair wait for it, then find the nonce moved and read again.
 */
export async function holdSeed(tx: Queryable, seedId: string): Promise<boolean> {
  const r = await tx.query('SELECT 1 FROM player_seeds WHERE id = $1 AND revealed_at IS NULL FOR UPDATE', [seedId]);
  return r.rowCount === 1;
}

/**
 * Commits a new server seed for the player (the caller revealed or never had the previous one);
 * nothing when the player already has an active pair (a concurrent first use made it).
 */
export async function insertSeed(tx: Queryable, cipher: SeedCipher, appId: string, playerId: string, clientSeed: string): Promise<void> {
  const seed = randomBytes(32).toString('hex');
  await tx.query(
    `INSERT INTO player_seeds (id, app_id, player_id, server_seed_encrypted, server_seed_hash, client_seed)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (app_id, player_id) WHERE revealed_at IS NULL DO NOTHING`,
    [randomUUID(), appId, playerId, await cipher.encrypt(seed), seedCommitment(seed), clientSeed],
  );
}

/**
 * Reveals the locked active pair and commits a new one with `clientSeed` (the same client seed
 * when rotating, a new one when the player sets it). Returns the revealed pair's row.
 */
export async function rotateSeed(
  tx: Queryable,
  cipher: SeedCipher,
  appId: string,
  playerId: string,
  active: ActiveSeed,
  clientSeed: string,
): Promise<void> {
  await tx.query('UPDATE player_seeds SET revealed_at = now() WHERE id = $1', [active.id]);
  await insertSeed(tx, cipher, appId, playerId, clientSeed);
}

/** A seed pair by id, whether active or revealed (for verification). */
export async function findSeed(
  db: Queryable,
  appId: string,
  playerId: string,
  id: string,
): Promise<(ActiveSeed & { revealedAt: Date | null }) | undefined> {
  const r = await db.query<SeedRow & { revealed_at: Date | null }>(
    `SELECT ${COLUMNS}, revealed_at FROM player_seeds WHERE app_id = $1 AND player_id = $2 AND id = $3`,
    [appId, playerId, id],
  );
  return r.rows[0] && { ...toSeed(r.rows[0]), revealedAt: r.rows[0].revealed_at };
}
