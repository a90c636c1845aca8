/** How the client reports a failed call: ApiError, with the JSON:API errors and Retry-After. */

/** One JSON:API error object as the API sends it. */
export interface ApiErrorObject {
  status: string;
  code: string;
  title: string;
  detail?: string;
  source?: { pointer?: string; parameter?: string; header?: string };
  meta?: Record<string, unknown>;
}

/** A call the API refused or failed: the HTTP status and the JSON:API errors it answered with. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly errors: ApiErrorObject[],
    /** Seconds to wait before trying again (`Retry-After`, or the error's `meta.retry_after_seconds`), when the API said. */
    readonly retryAfter?: number,
  ) {
    super(errors.map((e) => `${e.status} ${e.code}: ${e.detail ?? e.title}`).join('; ') || `HTTP ${status}`);
  }

  /** The code of the first error (e.g. `insufficient_funds`). */
  get code(): string | undefined {
    return this.errors[0]?.code;
  }

  /** The detail (else the title) of the first error. */
  get detail(): string | undefined {
    return this.errors[0]?.detail ?? this.errors[0]?.title;
  }
}

/** Seconds of a `Retry-After` header (delta-seconds or an HTTP date), if it has any. */
export function retryAfterOf(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The ApiError of a failed answer: its status, JSON:API errors and Retry-After. */
export function apiErrorOf(response: Response, error: unknown): ApiError {
  const sent = (error as { errors?: unknown } | undefined)?.errors;
  const errors = Array.isArray(sent) ? (sent as ApiErrorObject[]) : [];
  const fromMeta = errors.map((e) => e.meta?.retry_after_seconds).find((s): s is number => typeof s === 'number');
  return new ApiError(response.status, errors, retryAfterOf(response.headers) ?? fromMeta);
}

/** The document of a successful call, or the ApiError of a failed one. */
export function unwrap<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.response.ok && r.data !== undefined) return r.data;
  throw apiErrorOf(r.response, r.error);
}

/** Nothing of a successful call without content (204), or the ApiError of a failed one. */
export function unwrapEmpty(r: { error?: unknown; response: Response }): void {
  if (!r.response.ok) throw apiErrorOf(r.response, r.error);
}
