import { z } from 'zod';
import { isDatabaseUnavailable } from './database.js';
import { ERROR_KINDS, isFailureKind, type ErrorKind } from './kinds.js';

/** Where in the request an error points: a JSON pointer into the body, or a query/path parameter. */
export const ErrorSourceSchema = z
  .object({ pointer: z.string().optional(), parameter: z.string().optional(), header: z.string().optional() })
  .strict();
export type ErrorSource = z.infer<typeof ErrorSourceSchema>;

/** One error as it crosses NATS: what went wrong (`kind`), its stable `code`, and what the client may read. */
export const ErrorObjectSchema = z.object({
  kind: z.enum(ERROR_KINDS),
  code: z.string(),
  detail: z.string().optional(),
  source: ErrorSourceSchema.optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
});
export type ErrorObject = z.infer<typeof ErrorObjectSchema>;

/** The wire form of a failed reply: one or more error objects. */
export const ErrorReplySchema = z.object({ errors: z.array(ErrorObjectSchema).min(1) });

/**
 * The one error type of the system. Handlers throw it; the runtime encodes it across NATS; the
 * gateway renders it, choosing the HTTP status and title of its kind (services say what went
 * wrong, the edge says which HTTP status that is). Anything else thrown is an internal error
 * whose message never leaves the process.
 */
export class AppError extends Error {
  readonly errors: ErrorObject[];

  constructor(first: ErrorObject, ...rest: ErrorObject[]) {
    super(first.detail ?? first.code);
    this.name = 'AppError';
    this.errors = [first, ...rest];
  }

  /** What went wrong (the first error's kind). */
  get kind(): ErrorKind {
    return this.errors[0]!.kind;
  }

  get code(): string {
    return this.errors[0]!.code;
  }

  /** Several validation failures answered together; the kind (and so the status) is the first's. */
  static many(errors: ErrorObject[]): AppError {
    const [first, ...rest] = errors;
    if (!first) throw new Error('AppError.many needs at least one error');
    return new AppError(first, ...rest);
  }

  /** A malformed request: a parameter, header or message that does not parse (HTTP 400). */
  static badRequest(code: string, detail: string, source?: ErrorSource): AppError {
    return new AppError({ kind: 'bad_request', code, detail, source });
  }
  /** No caller, or an unidentifiable one (HTTP 401). */
  static unauthorized(code: string, detail: string): AppError {
    return new AppError({ kind: 'unauthenticated', code, detail });
  }
  static forbidden(code: string, detail: string): AppError {
    return new AppError({ kind: 'forbidden', code, detail });
  }
  static notFound(code: string, detail: string, source?: ErrorSource): AppError {
    return new AppError({ kind: 'not_found', code, detail, source });
  }
  static conflict(code: string, detail: string, source?: ErrorSource): AppError {
    return new AppError({ kind: 'conflict', code, detail, source });
  }
  /** A well-formed request the domain refuses (HTTP 422). */
  static unprocessable(code: string, detail: string, source?: ErrorSource): AppError {
    return new AppError({ kind: 'invalid', code, detail, source });
  }
  /** Too many requests right now (HTTP 429); `retryAfterSeconds`, when given, crosses as `meta.retry_after_seconds`. */
  static rateLimited(code: string, detail: string, retryAfterSeconds?: number): AppError {
    const meta = retryAfterSeconds === undefined ? undefined : { retry_after_seconds: Math.max(1, Math.ceil(retryAfterSeconds)) };
    return new AppError({ kind: 'rate_limited', code, detail, meta });
  }
  static unavailable(code: string, detail: string): AppError {
    return new AppError({ kind: 'unavailable', code, detail });
  }
  /** A service did not answer in time (HTTP 504). */
  static timeout(code: string, detail: string): AppError {
    return new AppError({ kind: 'timeout', code, detail });
  }
  /**
   * Postgres is away (restart, failover, lost connection): `unavailable` (503 at the gateway),
   * retry shortly. A request cut off at COMMIT may or may not have been applied; retried with the
   * same Idempotency-Key it is applied at most once. `cause` stays in this process (logs), it never crosses NATS.
   */
  static databaseUnavailable(cause?: unknown): AppError {
    const err = AppError.unavailable(
      'database_unavailable',
      'The database is not reachable right now. Retry shortly, with the same Idempotency-Key if the request had one.',
    );
    if (cause !== undefined) err.cause = cause;
    return err;
  }
  /**
   * More work is waiting than the service takes on: `overloaded` (503 at the gateway), answered
   * before anything was done, so a retry is safe. `meta.retry_after_seconds` crosses NATS with
   * the error (the error object's own meta) and the gateway sends it as `Retry-After` too.
   */
  static overloaded(detail: string, retryAfterSeconds: number): AppError {
    return new AppError({
      kind: 'overloaded',
      code: 'overloaded',
      detail,
      meta: { retry_after_seconds: Math.max(1, Math.ceil(retryAfterSeconds)) },
    });
  }
  /** A failure of ours (HTTP 500): the detail is generic, whatever went wrong stays in the logs. */
  static internal(): AppError {
    return new AppError({
      kind: 'internal',
      code: 'internal_error',
      detail: 'The request could not be completed. It has been logged; retry later.',
    });
  }
}

/**
 * Turns anything thrown into an AppError without leaking internals: a lost or unreachable
 * database is `unavailable` `database_unavailable`, anything else untyped a generic `internal`.
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return isDatabaseUnavailable(err) ? AppError.databaseUnavailable(err) : AppError.internal();
}

/** Converts zod issues into `invalid` (body, 422) or `bad_request` (query/path, 400) error objects with their source. */
export function zodIssuesToErrors(issues: readonly z.core.$ZodIssue[], where: 'body' | 'query' | 'params', bodyPrefix = ''): ErrorObject[] {
  return issues.map((issue) => {
    const path = issue.path.map(String);
    if (where === 'body') {
      // A rule of our own (a custom issue with params: e.g. content's `complete_gacha`) keeps its code and meta.
      const own = issue.code === 'custom' ? (issue.params as { code?: unknown; meta?: Record<string, unknown> } | undefined) : undefined;
      return {
        kind: 'invalid',
        code: typeof own?.code === 'string' ? own.code : 'invalid_field',
        detail: issue.message,
        source: { pointer: bodyPrefix + (path.length ? '/' + path.join('/') : '') || '/' },
        ...(own?.meta ? { meta: own.meta } : {}),
      };
    }
    const parameter = path.length
      ? path[0]! +
        path
          .slice(1)
          .map((p) => `[${p}]`)
          .join('')
      : where;
    return { kind: 'bad_request', code: 'invalid_parameter', detail: issue.message, source: { parameter } };
  });
}

/** The whole seconds an error asks the client to wait (`meta.retry_after_seconds` of its first object), if any. */
export function retryAfterSecondsOf(err: AppError): number | undefined {
  const v = err.errors[0]?.meta?.retry_after_seconds;
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.ceil(v) : undefined;
}

/**
 * True when `err` is a refusal of the request (an AppError of a client or domain kind: bad
 * request, unauthenticated, forbidden, not found, conflict, invalid, rate limited), which the
 * same request will meet again; false for a failure that a retry may get past (unavailable,
 * overloaded, timeout, internal) and for anything that is not an AppError.
 */
export function isPermanentFailure(err: unknown): boolean {
  return err instanceof AppError && !isFailureKind(err.kind);
}
