import { AppError } from '@ccs/shared';

/** The errors of a bounded simulation, with the codes clients see. */
export const simulationErrors = {
  busy: (retryAfterSeconds: number) =>
    AppError.rateLimited(
      'simulation_busy',
      'A simulation of this app is already running or waiting for its turn, and an app has one at a time: retry once it has finished (Retry-After).',
      retryAfterSeconds,
    ),
  overloaded: (retryAfterSeconds: number) =>
    AppError.overloaded('Too many simulations are running on this chests replica right now; nothing was done, retry shortly.', retryAfterSeconds),
  timeout: (timeoutMs: number) =>
    AppError.unavailable(
      'simulation_timeout',
      `The simulation did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped; ask for fewer openings.`,
    ),
  lockUnavailable: () =>
    AppError.unavailable('service_unavailable', 'Postgres, which keeps one simulation per app at a time, is not reachable. Retry shortly.'),
};
