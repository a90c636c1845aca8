/**
 * One HTTP exchange with Google, bounded: the caller's deadline (an AbortSignal) covers connect,
 * headers and the whole answer, at most `maxBytes` of the answer are read (more: a failure, the
 * rest is never received), redirects are not followed. Failures come back as values the store
 * maps to its answers, never as exceptions.
 */

/** Most bytes of one answer read from Google (a purchase or an order is a few KiB). */
export const GOOGLE_ANSWER_LIMIT = 256 * 1024;

/** The longest Retry-After honoured, in seconds (a longer one is clamped). */
const RETRY_AFTER_MAX_S = 3600;

/**
 * How a call to Google failed, for the caller to map:
 * - `unavailable`: timeout, connection refused or reset, 5xx, 408 or 429 (retry later;
 *   `retryAfterSeconds` when Google said when),
 * - `not_found`: 404 or 410, the purchase token or order is unknown to Google (the receipt is invalid),
 * - `invalid`: 400, Google refused the request as given (a malformed token, or a purchase not in a
 *   state for the operation),
 * - `credentials_rejected`: 401 or 403, or the token endpoint refused the service account's
 *   assertion (the studio's service account is wrong, deleted, or lacks access to the app),
 * - `malformed`: an answer that does not parse, is too large, or has an unexpected status.
 * `detail` is for logs: the HTTP status and Google's error status or reason, never a credential.
 */
export type GoogleFailure =
  | { kind: 'unavailable'; detail: string; retryAfterSeconds?: number }
  | { kind: 'not_found'; detail: string }
  | { kind: 'invalid'; detail: string }
  | { kind: 'credentials_rejected'; detail: string }
  | { kind: 'malformed'; detail: string };

/** A call's outcome: its value, or how it failed. */
export type GoogleResult<T> = { ok: true; value: T } | { ok: false; error: GoogleFailure };

/** An answer as received: status, headers and at most GOOGLE_ANSWER_LIMIT bytes of body. */
export interface GoogleAnswer {
  status: number;
  headers: Headers;
  body: Buffer;
}

export interface GoogleRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  maxBytes?: number;
}

export function fail<T>(error: GoogleFailure): GoogleResult<T> {
  return { ok: false, error };
}

/** The reason a request threw: the deadline, or the network (refused, reset, closed). */
function thrownFailure(err: unknown, signal: AbortSignal): GoogleFailure {
  if (signal.aborted) return { kind: 'unavailable', detail: 'timeout' };
  const cause = (err as { cause?: { code?: string } }).cause;
  const code = cause?.code ?? (err as { code?: string }).code ?? (err as Error).name;
  return { kind: 'unavailable', detail: `network: ${code}` };
}

/** Reads the body up to `maxBytes`; past it, stops reading and gives up. */
async function readBounded(res: Response, maxBytes: number): Promise<Buffer | undefined> {
  if (!res.body) return Buffer.alloc(0);
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body.cancel();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res.body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      await res.body.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** Sends one request and reads its answer within the signal's deadline and the size bound. Never throws. */
export async function exchange(req: GoogleRequest): Promise<GoogleResult<GoogleAnswer>> {
  const maxBytes = req.maxBytes ?? GOOGLE_ANSWER_LIMIT;
  try {
    const res = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
      redirect: 'manual',
    });
    const body = await readBounded(res, maxBytes);
    if (!body) return fail({ kind: 'malformed', detail: `answer over ${maxBytes} bytes (HTTP ${res.status})` });
    return { ok: true, value: { status: res.status, headers: res.headers, body } };
  } catch (err) {
    return fail(thrownFailure(err, req.signal));
  }
}

/** Retry-After as seconds (delta-seconds or an HTTP date), clamped to [1, 3600]; undefined when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  let seconds: number;
  if (/^\d+$/.test(trimmed)) seconds = Number(trimmed);
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    seconds = Math.ceil((at - now) / 1000);
  }
  return Math.min(RETRY_AFTER_MAX_S, Math.max(1, seconds));
}

/** Google's error status and reason from an error answer ({"error": {"status", "errors": [{"reason"}]}} or OAuth's {"error": "..."}), for logs. */
function googleReason(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown };
    const e = parsed.error;
    if (typeof e === 'string') return e.slice(0, 64);
    if (e && typeof e === 'object') {
      const { status, errors } = e as { status?: unknown; errors?: Array<{ reason?: unknown }> };
      const reason = Array.isArray(errors) ? errors[0]?.reason : undefined;
      return [status, reason]
        .filter((v): v is string => typeof v === 'string')
        .map((v) => v.slice(0, 64))
        .join('/');
    }
  } catch {
    // not JSON: the status alone says it
  }
  return '';
}

/** How a non-2xx answer of the Play Developer API maps to a failure. */
export function statusFailure(answer: GoogleAnswer): GoogleFailure {
  const { status } = answer;
  const reason = googleReason(answer.body);
  const detail = reason ? `HTTP ${status} ${reason}` : `HTTP ${status}`;
  if (status === 404 || status === 410) return { kind: 'not_found', detail };
  if (status === 400) return { kind: 'invalid', detail };
  if (status === 401 || status === 403) return { kind: 'credentials_rejected', detail };
  if (status === 408 || status === 429 || status >= 500) {
    const retry = retryAfterSeconds(answer.headers.get('retry-after'));
    return retry === undefined ? { kind: 'unavailable', detail } : { kind: 'unavailable', detail, retryAfterSeconds: retry };
  }
  return { kind: 'malformed', detail: `unexpected ${detail}` };
}

/** Parses a JSON answer body; undefined when it is not JSON. */
export function jsonOf(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
