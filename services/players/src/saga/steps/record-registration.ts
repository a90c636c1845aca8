import { withTransaction, type CallContext, type OutboxMessage, type Pool, type PoolClient, type SagaStep } from '@ccs/shared';
import { enqueueWelcomeGrants, type WelcomeGrantPlan } from '../welcome-grants.js';

/** What the registration records: the caller's work (create or upgrade the player, issue tokens) and the grants' plan. */
export interface RegistrationRecord<T> {
  plan: WelcomeGrantPlan;
  work: (tx: PoolClient) => Promise<T>;
  /** Where the grants' consumers announce that they applied them (an AppliedNotices subject). */
  notify: string;
}

/**
 * The registration saga's first step, in one transaction: the caller's work and the plan's
 * messages in the outbox (the grants and `player.registered`). Returns the work's result and the
 * messages, to publish after the commit. Nothing to compensate: a failure rolls all of it back.
 */
export function recordRegistration<T>(pool: Pool): SagaStep<RegistrationRecord<T>, { result: T; messages: OutboxMessage[] }, never, void> {
  return {
    id: 'record-registration',
    invoke: (r: RegistrationRecord<T>, ctx: CallContext) =>
      withTransaction(pool, async (tx) => {
        const result = await r.work(tx);
        return { result, messages: await enqueueWelcomeGrants(tx, r.plan, ctx, r.notify) };
      }),
    compensate: async () => undefined,
  };
}
