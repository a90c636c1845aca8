import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenChests, startService, type RunningService } from '@ccs/shared';
import { chestsServiceWith } from '../src/service.js';
import {
  callOf,
  chestsApp,
  chestsSql,
  grantedChests,
  openChest,
  startChestsTier,
  type ChestsTier,
  type ChestsTierRun,
} from './support/chests-tier.js';

/**
 * An opening races other replicas' openings of the same player by compare-and-set on the player's
 * seed pair (docs/architecture.md, "Opening a chest"). Here a rival wins that race before every
 * write of the player's openings, as another replica's queue of openings could: the fault seam
 * advances the pair's nonce, as a rival opening commits. The first OPTIMISTIC_ATTEMPTS (3) tries
 * lose; the 4th locks the pair, reads it again and cannot lose. Before that lock, such an opening
 * lost 20 times and answered 503 opening_contended (seen in CI: 60 openings over two replicas).
 */
describe('an opening that keeps losing its pair to another replica (service tier)', () => {
  let run: ChestsTierRun;
  let tier: ChestsTier;
  let appId: string;
  let chests: RunningService;
  /** Players whose openings have a rival, and the attempts the rival beat. */
  const rivalled = new Map<string, number[]>();

  beforeAll(async () => {
    run = await startChestsTier();
    tier = run.tier;
    ({ appId } = await chestsApp(tier));
    await tier.stopService();
    const beforeOpeningWrite = async (playerId: string, attempt: number) => {
      const beaten = rivalled.get(playerId);
      if (!beaten) return;
      beaten.push(attempt);
      // The rival's opening commits first: the pair's nonce moves on under ours.
      await chestsSql(tier, 'UPDATE player_seeds SET next_nonce = next_nonce + 1 WHERE player_id = $1 AND revealed_at IS NULL', [playerId]);
    };
    chests = await startService(chestsServiceWith({ beforeOpeningWrite }), tier.config);
  });
  afterAll(async () => {
    await chests?.stop();
    await tier?.close();
  });

  /** A player whose pair exists (a first chest opened: next nonce 1), then has a rival. */
  async function rivalledPlayer(): Promise<string> {
    const {
      playerId,
      chests: [first],
    } = await grantedChests(tier, appId, { source: 'welcome' });
    await openChest(tier, appId, playerId, first!);
    rivalled.set(playerId, []);
    return playerId;
  }
  const nextNonce = async (playerId: string) =>
    (
      await chestsSql<{ next_nonce: number }>(tier, 'SELECT next_nonce FROM player_seeds WHERE player_id = $1 AND revealed_at IS NULL', [playerId])
    )[0]!.next_nonce;
  const openings = (ids: string[]) =>
    chestsSql<{ chest_id: string; nonce: number }>(tier, 'SELECT chest_id, nonce FROM openings WHERE chest_id = ANY($1::uuid[]) ORDER BY nonce', [
      ids,
    ]);

  it('opens a chest on its 4th try, under the lock, with the nonce the rival left', async () => {
    const p = await rivalledPlayer();
    const {
      chests: [chest],
    } = await grantedChests(tier, appId, { playerId: p, chestTypeId: 'silver-chest' });
    const opened = await openChest(tier, appId, p, chest!);
    // Three lost compare-and-sets (nonces 1, 2, 3 went to the rival), then the locked turn (4 to the rival, 5 ours).
    expect(rivalled.get(p)).toEqual([1, 2, 3, 4]);
    expect(opened.fairness!.nonce).toBe(5);
    expect(await openings([chest!])).toEqual([{ chest_id: chest, nonce: 5 }]);
    expect(await nextNonce(p)).toBe(6);
  });

  it('opens a batch on its 4th try, under the lock, with consecutive nonces from the one the rival left', async () => {
    const p = await rivalledPlayer();
    const { chests: ids } = await grantedChests(tier, appId, { playerId: p, n: 3 });
    const batch = await tier.bus.request(OpenChests, { chestIds: ids }, callOf(appId, p));
    expect(rivalled.get(p)).toEqual([1, 2, 3, 4]);
    expect(batch.openings.map((o) => o.fairness!.nonce)).toEqual([5, 6, 7]);
    expect((await openings(ids)).map((o) => o.nonce)).toEqual([5, 6, 7]);
    expect(await nextNonce(p)).toBe(8);
  });

  it('opens a key-required chest under the lock, taking its key once', async () => {
    const p = await rivalledPlayer();
    const {
      chests: [vault],
    } = await grantedChests(tier, appId, { playerId: p, chestTypeId: 'vault-chest' });
    run.wallet.credit(p, 'vault_key', 2);
    const opened = await openChest(tier, appId, p, vault!);
    expect(rivalled.get(p)).toEqual([1, 2, 3, 4]);
    expect(opened.fairness!.nonce).toBe(5);
    expect(run.wallet.balance(p, 'vault_key')).toBe(1);
    // One debit of the key, kept (not refunded).
    expect([...run.wallet.debits.values()].filter((d) => d.playerId === p)).toEqual([
      { playerId: p, currency: 'vault_key', amount: 1, refunded: false },
    ]);
  });
});
