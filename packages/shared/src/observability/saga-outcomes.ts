import type { SagaName, SagaOutcome } from './metrics.js';
import { currentScope } from './scope.js';

/**
 * Counts one saga outcome (`ccs_saga_outcomes_total`) in the metrics of the service whose
 * request, message or worker is running: a one-line hook where the outcome is known.
 */
export function recordSagaOutcome(saga: SagaName, outcome: SagaOutcome): void {
  currentScope()?.metrics.saga(saga, outcome);
}
