import type { CallContext } from '@ccs/shared';
import type { SagaStep, StepResult } from './step.js';

/**
 * The one way a saga runs a step: invoke it and answer its output, or its failure classified by
 * the step (permanent or retryable). What the saga records around the call (pending, settled) and
 * what it does with each kind of failure stay with the saga; nothing is retried here.
 */
export async function runStep<Input, Output>(
  step: SagaStep<Input, Output, unknown, unknown>,
  input: Input,
  ctx: CallContext,
): Promise<StepResult<Output>> {
  try {
    return { ok: true, value: await step.invoke(input, ctx) };
  } catch (error) {
    return { ok: false, kind: step.classify(error), error };
  }
}

/** The one way a saga undoes a step: its compensation, given only the ids it needs. Throws when it cannot be done now (the sweeper retries). */
export function compensateStep<Ids, Undone>(step: SagaStep<never, unknown, Ids, Undone>, ids: Ids, ctx: CallContext): Promise<Undone> {
  return step.compensate(ids, ctx);
}
