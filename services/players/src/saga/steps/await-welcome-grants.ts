import { DURABLE, publishAndAwaitEach, type OutboxMessage, type SagaStep } from '@ccs/shared';
import type { PlayersDeps } from '../../deps.js';
import type { WelcomeGrantPlan } from '../welcome-grants.js';

/** A consumer that had not applied all of its grants when the wait ended. */
export interface PendingGrants {
  consumer: string;
  pending: number;
}

/**
 * The registration saga's second step, its read-your-writes wait: publishes the recorded messages
 * now instead of at the relay's next tick, then waits, bounded by GRANT_WAIT_MS, until the wallet
 * has applied the credits and chests the starter chest, both at once, so the balances read and the
 * starter chest opened right after the answer are there. Returns the consumers still behind (none
 * when all applied). Nothing to compensate: the grants are durable and land when a consumer that
 * is down or behind catches up.
 */
export function awaitWelcomeGrants(
  d: Pick<PlayersDeps, 'relay' | 'notices' | 'config' | 'log'>,
): SagaStep<{ plan: WelcomeGrantPlan; messages: OutboxMessage[] }, PendingGrants[], never, void> {
  return {
    id: 'await-welcome-grants',
    async invoke({ plan, messages }) {
      const waits = [
        { durable: DURABLE.walletCreditGrants, ids: plan.wallet.map((m) => m.id) },
        { durable: DURABLE.chestsGrants, ids: plan.chest ? [plan.chest.id] : [] },
      ];
      const seen = await publishAndAwaitEach(d, messages, waits, d.config.GRANT_WAIT_MS);
      return waits.map((w, i) => ({ consumer: w.durable, pending: w.ids.length - seen[i]!.size })).filter((w) => w.pending > 0);
    },
    compensate: async () => undefined,
  };
}
