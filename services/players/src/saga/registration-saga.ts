import { recordSagaOutcome, runStep, type CallContext, type PoolClient } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { awaitWelcomeGrants } from './steps/await-welcome-grants.js';
import { recordRegistration } from './steps/record-registration.js';
import type { WelcomeGrantPlan } from './welcome-grants.js';

/**
 * The registration saga (a registration, a guest's creation or its upgrade), its steps in the
 * shape of every saga (`SagaStep`, packages/shared/src/runtime/saga-step.ts):
 * 1. `record-registration`: in one transaction, `work` (create or upgrade the player, issue
 *    tokens) and the grant messages;
 * 2. `await-welcome-grants`: publish them and wait (bounded) until the wallet and chests applied
 *    them. If either is down or behind, the answer still goes out at the bound.
 * Neither step has anything to compensate. A failure of the first is counted `failed` unless it
 * is a refusal (`permanent`: e.g. the email taken); the outcome is `completed`, or `grant_pending`
 * when a grant was not applied in time (`ccs_saga_outcomes_total`, saga `registration`).
 */
export async function runRegistration<T>(d: PlayersDeps, plan: WelcomeGrantPlan, ctx: CallContext, work: (tx: PoolClient) => Promise<T>): Promise<T> {
  const recorded = await runStep(recordRegistration<T>(d.pool), { plan, work, notify: d.notices.subject }, ctx);
  if (!recorded.ok) {
    if (recorded.kind === 'retryable') recordSagaOutcome('registration', 'failed');
    throw recorded.error;
  }
  const pending = await awaitWelcomeGrants(d).invoke({ plan, messages: recorded.value.messages }, ctx);
  recordSagaOutcome('registration', pending.length ? 'grant_pending' : 'completed');
  if (pending.length) d.log.info({ requestId: ctx.requestId, pending }, 'answered before the grants were all applied; they land later');
  return recorded.value.result;
}
