import { withTransaction, type InventoryChestView, type Pool } from '@ccs/shared';
import { chestErrors } from '../errors.js';
import { findUnopened } from '../repositories/inventory-repo.js';
import { lockPlayerUnlocks, readUnlockState, runningTimers, startTimer, type UnlockState } from '../repositories/unlock-repo.js';

/** Who unlocks which chest, and whether by paying to skip the timer. */
export interface UnlockCommand {
  appId: string;
  playerId: string;
  chestId: string;
  /** The currency to skip the timer with; absent: start the timer. */
  skipWith?: string;
}

/** The chest after the call, and what a skip charged. */
export interface UnlockOutcome {
  chest: InventoryChestView;
  charged?: { currency: string; amount: number; balance: string };
}

/** The chest as the inventory shows it now (it exists: the caller owns it and it is unopened). */
export async function chestNow(t: { pool: Pool }, cmd: UnlockCommand): Promise<InventoryChestView> {
  const chest = await findUnopened(t.pool, cmd.appId, cmd.playerId, cmd.chestId);
  if (!chest) throw chestErrors.chestAlreadyOpened();
  return chest;
}

/** The checks every unlock makes: the chest exists, is the caller's, unopened and time-locked. */
export function checkedUnlock(state: UnlockState | undefined, cmd: UnlockCommand): UnlockState & { unlock: NonNullable<UnlockState['unlock']> } {
  if (!state) throw chestErrors.chestNotFound();
  if (state.playerId !== cmd.playerId) throw chestErrors.chestNotOwned();
  if (state.opened) throw chestErrors.chestAlreadyOpened();
  if (!state.unlock) throw chestErrors.chestNotTimeLocked();
  return state as UnlockState & { unlock: NonNullable<UnlockState['unlock']> };
}

/**
 * Starts a chest's timer (docs/content.md, "Time-locked chests"), in one transaction under the
 * player's unlock lock: at most `unlock_slots` timers run at once (409 unlock_slot_busy past
 * them). A timer already running, or a chest already unlocked, is answered as it is: a retry
 * changes nothing.
 */
export async function startUnlock(t: { pool: Pool }, cmd: UnlockCommand): Promise<UnlockOutcome> {
  await withTransaction(t.pool, async (tx) => {
    await lockPlayerUnlocks(tx, cmd.appId, cmd.playerId);
    const state = checkedUnlock(await readUnlockState(tx, cmd.appId, cmd.chestId), cmd);
    if (state.unlocksAt) return;
    const running = await runningTimers(tx, cmd.appId, cmd.playerId);
    if (running.count >= state.slots) throw chestErrors.unlockSlotBusy(state.slots, running.nextEnd);
    await startTimer(tx, cmd.appId, cmd.chestId, state.unlock.seconds);
  });
  return { chest: await chestNow(t, cmd) };
}
