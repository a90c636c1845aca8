import {
  DURABLE,
  isPermanentFailure,
  publishAndAwait,
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
 * 3. wait, bounded by GRANT_WAIT_MS, until the wallet has applied the credits, so the balances read
 *    right after the answer include them. If the wallet is down the answer still goes out: the
 *    grants are durable and land when it returns. The chests service applies the chest grant on
 *    its own; nothing waits for it.
 */
export async function withWelcomeGrants<T>(
  d: PlayersDeps,
  plan: WelcomeGrantPlan,
  ctx: CallContext,
  work: (tx: PoolClient) => Promise<T>,
): Promise<T> {
  const ids = plan.wallet.map((m) => m.id);
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
  const seen = await publishAndAwait(d, messages, { durable: DURABLE.walletCreditGrants, ids, timeoutMs: d.config.GRANT_WAIT_MS });
  recordSagaOutcome('registration', seen.size < ids.length ? 'grant_pending' : 'completed');
  if (seen.size < ids.length) {
    d.log.info({ requestId: ctx.requestId, pending: ids.length - seen.size }, 'answered before the wallet applied the grants; they land later');
  }
  return result;
}
