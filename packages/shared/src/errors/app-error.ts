import { z } from 'zod';
import { isDatabaseUnavailable } from './database.js';

/** Where in the request an error points: a JSON pointer into the body, or a query/path parameter. */
export const ErrorSourceSchema = z
  .object({ pointer: z.string().optional(), parameter: z.string().optional(), header: z.string().optional() })
  .strict();
export type ErrorSource = z.infer<typeof ErrorSourceSchema>;

/** One error as it crosses NATS and as the gateway renders it (a JSON:API error object). */
export const ErrorObjectSchema = z.object({
  status: z.number().int().min(400).max(599),
  code: z.string(),
  title: z.string(),
  detail: z.string().optional(),
  source: ErrorSourceSchema.optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
});
export type ErrorObject = z.infer<typeof ErrorObjectSchema>;

/** The wire form of a failed reply: one or more error objects. */
export const ErrorReplySchema = z.object({ errors: z.array(ErrorObjectSchema).min(1) });

/**
 * The one error type of the system. Handlers throw it; the runtime encodes it across NATS;
 * the gateway renders it unchanged. Anything else thrown is an internal error whose message
 * never leaves the process.
 */
export class AppError extends Error {
  readonly errors: ErrorObject[];

  constructor(first: ErrorObject, ...rest: ErrorObject[]) {
    super(first.detail ?? first.title);
    this.name = 'AppError';
    this.errors = [first, ...rest];
  }

  get status(): number {
    return this.errors[0]!.status;
  }

  get code(): string {
    return this.errors[0]!.code;
  }

  /** Several validation failures answered together; status is taken from the first. */
  static many(errors: ErrorObject[]): AppError {
    const [first, ...rest] = errors;
    if (!first) throw new Error('AppError.many needs at least one error');
    return new AppError(first, ...rest);
  }

  static badRequest(code: string, detail: string, source?: ErrorSource): AppError {
    return new AppError({ status: 400, code, title: 'Bad Request', detail, source });
  }
  static unauthorized(code: string, detail: string): AppError {
    return new AppError({ status: 401, code, title: 'Unauthorized', detail });
  }
  static forbidden(code: string, detail: string): AppError {
    return new AppError({ status: 403, code, title: 'Forbidden', detail });
  }
  static notFound(code: string, detail: string, source?: ErrorSource): AppError {
    return new AppError({ status: 404, code, title: 'Not Found', detail, source });
  }
  static conflict(code: string, detail: string, source?: ErrorSource): AppError {
    return new AppError({ status: 409, code, title: 'Conflict', detail, source });
  }
  static unprocessable(code: string, detail: string, source?: ErrorSource): AppError {
    return new AppError({ status: 422, code, title: 'Unprocessable Entity', detail, source });
  }
  static unavailable(code: string, detail: string): AppError {
    return new AppError({ status: 503, code, title: 'Service Unavailable', detail });
  }
  /**
   * Postgres is away (restart, failover, lost connection): 503, retry shortly. A request cut off
   * at COMMIT may or may not have been applied; retried with the same Idempotency-Key it is
   * applied at most once. `cause` stays in this process (logs), it never crosses NATS.
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
   * More work is waiting than the service takes on: 503, answered before anything was done, so a
   * retry is safe. `meta.retry_after_seconds` crosses NATS with the error (a JSON:API error
   * object's own meta) and the gateway sends it as `Retry-After` too.
   */
  static overloaded(detail: string, retryAfterSeconds: number): AppError {
    return new AppError({
      status: 503,
      code: 'overloaded',
      title: 'Service Unavailable',
      detail,
      meta: { retry_after_seconds: Math.max(1, Math.ceil(retryAfterSeconds)) },
    });
  }
  static internal(): AppError {
    return new AppError({
      status: 500,
      code: 'internal_error',
      title: 'Internal Server Error',
      detail: 'The request could not be completed. It has been logged; retry later.',
    });
  }
}

/**
 * Turns anything thrown into an AppError without leaking internals: a lost or unreachable
 * database is 503 `database_unavailable`, anything else untyped a generic 500.
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return isDatabaseUnavailable(err) ? AppError.databaseUnavailable(err) : AppError.internal();
}

/** Converts zod issues into 422 (body) or 400 (query/path) error objects with their source. */
export function zodIssuesToErrors(issues: readonly z.core.$ZodIssue[], where: 'body' | 'query' | 'params', bodyPrefix = ''): ErrorObject[] {
  return issues.map((issue) => {
    const path = issue.path.map(String);
    if (where === 'body') {
      return {
        status: 422,
        code: 'invalid_field',
        title: 'Unprocessable Entity',
        detail: issue.message,
        source: { pointer: bodyPrefix + (path.length ? '/' + path.join('/') : '') || '/' },
      };
    }
    const parameter = path.length
      ? path[0]! +
        path
          .slice(1)
          .map((p) => `[${p}]`)
          .join('')
      : where;
    return { status: 400, code: 'invalid_parameter', title: 'Bad Request', detail: issue.message, source: { parameter } };
  });
}

/** The whole seconds an error asks the client to wait (`meta.retry_after_seconds` of its first object), if any. */
export function retryAfterSecondsOf(err: AppError): number | undefined {
  const v = err.errors[0]?.meta?.retry_after_seconds;
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.ceil(v) : undefined;
}
