import { z } from 'zod';
import { inputSchema, ref, type JsonSchema } from './components.js';
import { queryErrorLines } from './query-parameters.js';
import type { ErrorStatus, RouteDoc } from './route-doc.js';

/** What the document needs to know about a route beyond its RouteDoc (read from the route itself). */
export interface RouteFacts {
  method: string;
  /** Whether the route needs an `apikey` (every /api route and the spec's unprefixed aliases). */
  apiKey: boolean;
  /** Whether a Bearer token sent to it is verified, and its player's lock checked (the app and player scopes). */
  tokenChecked: boolean;
  /** Whether it is rate-limited (everything under /api and the aliases), and by the tighter credential limit. */
  rateLimited: boolean;
  authLimited: boolean;
  pathParams: string[];
}

const TITLES: Record<ErrorStatus, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** Response headers shared by many answers, as `components.headers`. */
export const HEADER_COMPONENTS = {
  RequestId: {
    description: 'The request id (a well-formed incoming `X-Request-Id` is kept): every service logs it; quote it when reporting a problem.',
    schema: { type: 'string' },
  },
  RetryAfter: { description: 'Seconds to wait before retrying.', schema: inputSchema(z.string().regex(/^\d+$/)) },
};

/** The header every answer carries. */
export const REQUEST_ID_HEADER = { 'x-request-id': { $ref: '#/components/headers/RequestId' } };

/** The failures a route shares with every route of its kind (key, token, query, body, limits, backends). */
function commonLines(doc: RouteDoc, facts: RouteFacts): [ErrorStatus, string][] {
  const lines: [ErrorStatus, string][] = [];
  if (facts.apiKey) {
    lines.push([401, 'no `apikey` header (`missing_api_key`) or an unknown or revoked one (`invalid_api_key`)']);
    lines.push([401, 'an `Authorization` header that is not a valid, unexpired Bearer token of this app (`invalid_token`, `token_expired`)']);
  }
  if (doc.token === 'required') lines.push([401, 'no Bearer token (`missing_token`)']);
  if (facts.tokenChecked) lines.push([403, 'a Bearer token of a player the studio locked (`player_locked`): every request with it is refused']);
  if (doc.query) for (const l of queryErrorLines(doc.query)) lines.push([400, l]);
  if (facts.pathParams.length) lines.push([414, 'a path segment longer than 500 characters (`uri_too_long`)']);
  if (['POST', 'PATCH', 'PUT', 'DELETE'].includes(facts.method)) {
    lines.push([413, 'a body larger than `BODY_LIMIT_BYTES` (`payload_too_large`)']);
    lines.push([415, 'a body with another `Content-Type`, or the JSON:API media type with parameters (`unsupported_media_type`)']);
  }
  if (doc.body) {
    lines.push([400, 'a body that is not valid JSON (`malformed_json`)']);
    if (doc.body.required) lines.push([400, 'no body (`missing_body`)']);
    lines.push([422, 'a body member failing validation (`invalid_field`): one error per member, each with its `source.pointer`']);
  }
  lines.push([406, '`Accept` names the JSON:API media type only with media type parameters (`not_acceptable`)']);
  if (facts.rateLimited) {
    lines.push([
      429,
      facts.authLimited
        ? 'more than `RATE_LIMIT_AUTH_PER_MINUTE` (default 30) credential requests per minute from this app and address (`rate_limited`)'
        : 'more than `RATE_LIMIT_PER_MINUTE` (default 1200) requests per minute from this app and player, or address without a token (`rate_limited`)',
    ]);
  }
  if (facts.apiKey) {
    lines.push([503, 'a backing service is not running (`service_unavailable`), answered once it has had no replica for a second; `Retry-After: 1`']);
    lines.push([
      503,
      "a backing service's database is unreachable (`database_unavailable`: a Postgres restart or failover); `Retry-After: 1`. A write sent with an `Idempotency-Key` may have applied: the same request with the same key applies it once",
    ]);
    lines.push([
      504,
      'a backing service did not answer within `NATS_READ_TIMEOUT_MS` (reads) or `NATS_REQUEST_TIMEOUT_MS` (writes) (`service_timeout`)',
    ]);
  }
  if (doc.passwordQueue) {
    lines.push([
      503,
      'too many password checks already waiting in the players service (`overloaded`): answered at once, nothing done; retry after `Retry-After` seconds (also in `meta.retry_after_seconds`)',
    ]);
  }
  lines.push([500, 'a bug on our side (`internal_error`): a generic message; the details are in the service log under the `x-request-id`']);
  return lines;
}

/**
 * The error responses of a route: the failures every such route shares (apikey, token, query,
 * body, limits, backing services) and its own, each status with the cases that produce it.
 * All are JSON:API error documents.
 */
export function errorResponses(doc: RouteDoc, facts: RouteFacts): Record<string, unknown> {
  const byStatus = new Map<ErrorStatus, string[]>();
  const add = (status: ErrorStatus, line: string) => byStatus.set(status, [...(byStatus.get(status) ?? []), line]);
  for (const [status, line] of commonLines(doc, facts)) add(status, line);
  for (const [status, lines] of Object.entries(doc.errors ?? {})) for (const line of lines) add(Number(status) as ErrorStatus, line);
  const out: Record<string, unknown> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const headers: Record<string, unknown> = { ...REQUEST_ID_HEADER };
    if (status === 429 || status === 503) headers['retry-after'] = { $ref: '#/components/headers/RetryAfter' };
    const lines = byStatus
      .get(status)!
      .map((l) => `- ${l}`)
      .join('\n');
    out[String(status)] = {
      description: `${TITLES[status]}:\n${lines}`,
      headers,
      content: { 'application/vnd.api+json': { schema: ref('ErrorDocument') as JsonSchema } },
    };
  }
  return out;
}
