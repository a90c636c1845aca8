import type { AppError, ErrorKind, ErrorObject } from '@ccs/shared';

/**
 * The one table from what went wrong to how HTTP says it. Services (and the gateway's own routes)
 * throw AppErrors that carry a kind and a code; only here does a kind become a status and the
 * JSON:API `title` that goes with it.
 */
export const HTTP_STATUS_OF_KIND: Readonly<Record<ErrorKind, { status: number; title: string }>> = {
  bad_request: { status: 400, title: 'Bad Request' },
  unauthenticated: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not Found' },
  conflict: { status: 409, title: 'Conflict' },
  invalid: { status: 422, title: 'Unprocessable Entity' },
  rate_limited: { status: 429, title: 'Too Many Requests' },
  internal: { status: 500, title: 'Internal Server Error' },
  unavailable: { status: 503, title: 'Service Unavailable' },
  overloaded: { status: 503, title: 'Service Unavailable' },
  timeout: { status: 504, title: 'Gateway Timeout' },
};

/**
 * A refusal of the HTTP protocol itself, which no service produces and no kind names (406 Not
 * Acceptable, 413, 414, 415 Unsupported Media Type, Fastify's other 4xx): the edge gives its
 * status and title where it is thrown.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'HttpError';
  }
}

/** A JSON:API error object as the API answers it (status as a string, per the schema). */
export type RenderedError = Record<string, unknown>;

/** One error object of an AppError, with the status and title of its kind. */
function renderObject(e: ErrorObject): RenderedError {
  const { status, title } = HTTP_STATUS_OF_KIND[e.kind];
  const out: RenderedError = { status: String(status), code: e.code, title };
  if (e.detail) out.detail = e.detail;
  if (e.source && Object.keys(e.source).length) out.source = e.source;
  if (e.meta) out.meta = e.meta;
  return out;
}

/** The HTTP status an error is answered with: its own (HttpError) or its first kind's. */
export function httpStatusOf(err: AppError | HttpError): number {
  return err instanceof HttpError ? err.status : HTTP_STATUS_OF_KIND[err.kind].status;
}

/** The JSON:API error document of an error: every object of an AppError, or the one of an HttpError. */
export function errorDocument(err: AppError | HttpError): { errors: RenderedError[] } {
  if (err instanceof HttpError) return { errors: [{ status: String(err.status), code: err.code, title: err.title, detail: err.detail }] };
  return { errors: err.errors.map(renderObject) };
}
