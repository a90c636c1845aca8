import { AppError, DebitCurrency, RefundDebit, type Bus, type CallContext, type Logger, type Pool } from '@ccs/shared';
import { insertKeyDebit, keyReference, moveKeyDebit, type RequiredKey } from '../repositories/keys-repo.js';

/** What the key saga needs from the service. */
export interface KeyTools {
  pool: Pool;
  bus: Bus;
  log: Logger;
}

export const keyErrors = {
  keyRequired: (key: RequiredKey) =>
    new AppError({
      status: 409,
      code: 'key_required',
      title: 'Conflict',
      detail: `This chest needs ${key.amount} ${key.currency} to open, and the balance is too low.`,
      meta: { currency: key.currency, amount: key.amount },
    }),
  interrupted: () =>
    AppError.unavailable('opening_interrupted', 'The opening was interrupted and the key refunded; retry (with the same Idempotency-Key).'),
};

/**
 * Step 1 of a key-required opening: records the key debit (`pending`, so a crash from here on is
 * settled by the KeySweeper), then asks the wallet to debit the key (reference `key:<id>`). No key
 * → 409 `key_required`, nothing kept. A wallet that does not answer leaves the record pending: the
 * sweeper refunds it, or voids the reference if the debit never happened.
 */
export async function debitKey(t: KeyTools, d: { appId: string; playerId: string; chestId: string } & RequiredKey, ctx: CallContext): Promise<string> {
  const id = await insertKeyDebit(t.pool, d);
  try {
    await t.bus.request(DebitCurrency, { playerId: d.playerId, currency: d.currency, amount: String(d.amount), reference: keyReference(id) }, ctx);
  } catch (err) {
    if (err instanceof AppError && err.code === 'insufficient_funds') {
      await moveKeyDebit(t.pool, id, ['pending'], 'refunded');
      throw keyErrors.keyRequired(d);
    }
    throw err;
  }
  return id;
}

/**
 * Compensation: the chest could not be consumed, so the key goes back. The record moves to
 * `refunding` first (the sweeper retries from there if the wallet is away), then `refunded`.
 */
export async function refundKey(t: KeyTools, id: string, ctx: CallContext): Promise<void> {
  if (!(await moveKeyDebit(t.pool, id, ['pending'], 'refunding'))) return;
  try {
    await t.bus.request(RefundDebit, { reference: keyReference(id) }, ctx);
    await moveKeyDebit(t.pool, id, ['refunding'], 'refunded');
  } catch (err) {
    t.log.warn({ err: String(err), keyDebit: id }, 'key refund failed; the key sweeper will retry');
  }
}
