/**
 * What went wrong, in domain terms: the closed set of error kinds every error crossing NATS
 * carries next to its stable `code`. Services say which kind; the gateway alone chooses the HTTP
 * status and title a kind is answered with (services/gateway/src/http-errors.ts).
 */
export const ERROR_KINDS = [
  /** A malformed request: a parameter, header or message that does not parse. */
  'bad_request',
  /** No caller, or not one this service can identify (no or a bad key or token). */
  'unauthenticated',
  /** A known caller who may not do this. */
  'forbidden',
  /** The thing asked for does not exist (for this caller). */
  'not_found',
  /** The request collides with the current state (already done, in use, full, too low). */
  'conflict',
  /** A well-formed request the domain refuses (a field's value breaks a rule). */
  'invalid',
  /** Too many requests of this caller or app right now: retry later. */
  'rate_limited',
  /** Something this request needs is away (a service, the database, content): retry shortly. */
  'unavailable',
  /** More work is waiting than the service takes on; nothing was done: retry shortly. */
  'overloaded',
  /** A service did not answer in time; the request may or may not have been applied. */
  'timeout',
  /** A failure of ours (a bug): logged, its details never sent. */
  'internal',
] as const;

export type ErrorKind = (typeof ERROR_KINDS)[number];

/** The kinds that are a failure of the system, not a refusal of the request: retrying may succeed. */
const FAILURE_KINDS: ReadonlySet<ErrorKind> = new Set<ErrorKind>(['unavailable', 'overloaded', 'timeout', 'internal']);

/** True when `kind` is the system failing (unavailable, overloaded, timeout, internal), false for a refusal. */
export function isFailureKind(kind: ErrorKind): boolean {
  return FAILURE_KINDS.has(kind);
}
