import {
  DURABLE,
  isPermanentFailure,
  publishAndAwaitEach,
  recordSagaOutcome,
  withTransaction,
  type CallContext,
  type OutboxMessage,
  type PoolClient,
} from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { enqueueWelcomeGrants, type WelcomeGrantPlan } from './welcome-grants.js';

/**
 * The registration saga's first step and its read-your-writes wait:
 * 1. in one transaction, `work` (create or upgrade the player, issue tokens) and the grant messages;
 * 2. publish its messages now instead of at the relay's next tick;
 * 3. wait, bounded by GRANT_WAIT_MS, until the wallet has applied the credits and chests the
 *    starter chest, both at once, so the balances read and the starter chest opened right after
 *    the answer are there. If either is down or behind, the answer still goes out at the bound: the
 *    grants are durable and land when it catches up.
 */
export async function withWelcomeGrants<T>(
  d: PlayersDeps,
  plan: WelcomeGrantPlan,
  ctx: CallContext,
  work: (tx: PoolClient) => Promise<T>,
): Promise<T> {
  const waits = [
    { durable: DURABLE.walletCreditGrants, ids: plan.wallet.map((m) => m.id) },
    { durable: DURABLE.chestsGrants, ids: plan.chest ? [plan.chest.id] : [] },
  ];
  let result: T;
  let messages: OutboxMessage[];
  try {
    [result, messages] = await withTransaction(d.pool, async (tx) => {
      const r = await work(tx);
      return [r, await enqueueWelcomeGrants(tx, plan, ctx, d.notices.subject)] as const;
    });
  } catch (err) {
    if (!isPermanentFailure(err)) recordSagaOutcome('registration', 'failed');
    throw err;
  }
  const seen = await publishAndAwaitEach(d, messages, waits, d.config.GRANT_WAIT_MS);
  const pending = waits.map((w, i) => ({ consumer: w.durable, pending: w.ids.length - seen[i]!.size })).filter((w) => w.pending > 0);
  recordSagaOutcome('registration', pending.length ? 'grant_pending' : 'completed');
  if (pending.length) d.log.info({ requestId: ctx.requestId, pending }, 'answered before the grants were all applied; they land later');
  return result;
}
