import { isPermanentFailure } from '../errors/app-error.js';
import type { CallContext } from '../contracts/context.js';

/**
 * How a step's call failed. `permanent`: the other side answered with a refusal (too low a
 * balance, an unknown currency): nothing happened, and asking again changes nothing. `retryable`:
 * no answer, or the other side failed inside: the effect may have happened, so the saga
 * compensates (now, or through its sweeper) rather than assume it did not.
 */
export type FailureKind = 'permanent' | 'retryable';

/**
 * The one place failures are told apart, for every step, by the kind of the error: a refusal of
 * the request (an AppError of a client or domain kind, e.g. the wallet's conflict
 * insufficient_funds) is permanent; no answer (unavailable, timeout from the bus), a failure
 * inside (internal) or anything that is not an AppError may hide an effect that happened.
 */
export function classifyFailure(err: unknown): FailureKind {
  return isPermanentFailure(err) ? 'permanent' : 'retryable';
}

/**
 * One step of a saga: an id (for logs and metrics), `invoke` with what it needs, and `compensate`
 * with only the ids that name what `invoke` did (the compensation of a step that never ran, or
 * whose effect rolled back with its transaction, is a no-op). Its failures are classified by
 * `classifyFailure`.
 */
export interface SagaStep<Input, Output, Ids, Undone> {
  readonly id: string;
  invoke(input: Input, ctx: CallContext): Promise<Output>;
  compensate(ids: Ids, ctx: CallContext): Promise<Undone>;
}

/** What running a step gives: its output, or its failure with its kind. */
export type StepResult<Output> = { ok: true; value: Output } | { ok: false; kind: FailureKind; error: unknown };

/** A step bound to its input, as a saga lists it for the runner. */
export interface PlannedStep<Output> {
  readonly id: string;
  invoke(ctx: CallContext): Promise<Output>;
}

/** Binds a step to its input (e.g. a check or an effect of a payment saga). */
export function planned<Input, Output>(step: SagaStep<Input, Output, unknown, unknown>, input: Input): PlannedStep<Output> {
  return { id: step.id, invoke: (ctx) => step.invoke(input, ctx) };
}

/**
 * The one way a saga runs a step: invoke it and answer its output, or its failure classified
 * (`classifyFailure`: permanent or retryable). Nothing is retried here.
 */
export async function runStep<Input, Output>(
  step: Pick<SagaStep<Input, Output, unknown, unknown>, 'invoke'>,
  input: Input,
  ctx: CallContext,
): Promise<StepResult<Output>> {
  try {
    return { ok: true, value: await step.invoke(input, ctx) };
  } catch (error) {
    return { ok: false, kind: classifyFailure(error), error };
  }
}

/** The one way a saga undoes a step: its compensation, given only the ids it needs. Throws when it cannot be done now (a sweeper retries). */
export function compensateStep<Ids, Undone>(step: SagaStep<never, unknown, Ids, Undone>, ids: Ids, ctx: CallContext): Promise<Undone> {
  return step.compensate(ids, ctx);
}
