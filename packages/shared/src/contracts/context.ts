import { z } from 'zod';
import { AppError } from '../errors/app-error.js';

/** Who is calling, carried in NATS headers on every message. */
export interface CallContext {
  requestId: string;
  appId?: string;
  playerId?: string;
  /** W3C trace context, passed through unchanged. */
  traceparent?: string;
  /**
   * When the caller stops waiting for this call's answer (ms since the epoch, this process's clock),
   * set on arrival from the `ccs-budget-ms` header the Bus sends; none outside a call (consumers,
   * workers, the gateway's own HTTP requests). See runtime/deadline.ts.
   */
  deadline?: number;
}

export const HEADER = {
  requestId: 'ccs-request-id',
  appId: 'ccs-app-id',
  playerId: 'ccs-player-id',
  traceparent: 'traceparent',
  /** Milliseconds the caller of a request will wait for its answer (set per call by the Bus). */
  budget: 'ccs-budget-ms',
} as const;

/**
 * Every id of every message: a UUID in any case, lower-cased where it is parsed (services parse
 * every request with its contract), so an id is compared case-insensitively everywhere: a chest id
 * in upper case names the same chest in a batch as in a single open, and in every lookup.
 */
export const UuidSchema = z
  .string()
  .uuid()
  .overwrite((id) => id.toLowerCase());

/**
 * The app a call is scoped to, as every service reads it: a UUID, lower-cased. A call naming none
 * (or a malformed one) is refused with 400 `missing_app`: the gateway always sets it, so only a
 * caller on the bus that skipped it gets this.
 */
export function appOf(ctx: CallContext): string {
  if (!ctx.appId || !UuidSchema.safeParse(ctx.appId).success) throw AppError.badRequest('missing_app', 'The call names no app.');
  return ctx.appId.toLowerCase();
}

/** The calling player of a player operation, lower-cased; none (or a malformed one) → 401 `missing_token`. */
export function callerOf(ctx: CallContext): string {
  const caller = optionalCallerOf(ctx);
  if (!caller) throw AppError.unauthorized('missing_token', 'Send Authorization: Bearer <access token>.');
  return caller;
}

/** The calling player where a token is optional (public reads that add the caller's own data). */
export function optionalCallerOf(ctx: CallContext): string | undefined {
  if (ctx.playerId === undefined) return undefined;
  if (!UuidSchema.safeParse(ctx.playerId).success) throw AppError.unauthorized('missing_token', 'Send Authorization: Bearer <access token>.');
  return ctx.playerId.toLowerCase();
}
/** Money as a decimal string with at most two fraction digits: never a float. */
export const DecimalSchema = z.string().regex(/^\d+(\.\d{1,2})?$/);
/**
 * A balance as a decimal string, below zero when the player owes it (a debt: a store refund took
 * back currency that was already spent), e.g. `"-300.00"`.
 */
export const SignedDecimalSchema = z.string().regex(/^-?\d+(\.\d{1,2})?$/);
export const IsoDateSchema = z.string();
