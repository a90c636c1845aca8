import type { CallContext } from '@ccs/shared';

/**
 * How a step's call failed. `permanent`: the other side answered with a refusal (too low a
 * balance, an unknown currency): nothing happened, and asking again changes nothing. `retryable`:
 * no answer, or the other side failed inside: the effect may have happened, so the saga
 * compensates (now, or through its sweeper) rather than assume it did not.
 */
export type FailureKind = 'permanent' | 'retryable';

/**
 * One step of a saga: an id (for logs and metrics), `invoke` with what it needs, `compensate`
 * with only the ids that name what `invoke` did (the compensation of a step that never ran is a
 * no-op), and how its failures are told apart.
 */
export interface SagaStep<Input, Output, Ids, Undone> {
  readonly id: string;
  invoke(input: Input, ctx: CallContext): Promise<Output>;
  compensate(ids: Ids, ctx: CallContext): Promise<Undone>;
  classify(err: unknown): FailureKind;
}

/** What running a step gives: its output, or its failure with the kind the step gave it. */
export type StepResult<Output> = { ok: true; value: Output } | { ok: false; kind: FailureKind; error: unknown };
