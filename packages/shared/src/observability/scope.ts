import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServiceMetrics } from './metrics.js';

/**
 * What the code running for one request or message can learn without being handed it: the
 * metrics of the service doing the work (an in-process test stack runs several services in one
 * process, so "the process's registry" would mix them up) and the request id it belongs to.
 */
export interface ObservabilityScope {
  metrics: ServiceMetrics;
  /** The gateway's request id, carried to every service in the `ccs-request-id` header. */
  requestId?: string;
}

const storage = new AsyncLocalStorage<ObservabilityScope>();

/** Runs fn (and everything it schedules) inside a scope. */
export function runInScope<T>(scope: ObservabilityScope, fn: () => T): T {
  return storage.run(scope, fn);
}

/** The scope of the work running now, if any. */
export function currentScope(): ObservabilityScope | undefined {
  return storage.getStore();
}
