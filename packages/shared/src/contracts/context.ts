import { z } from 'zod';

/** Who is calling, carried in NATS headers on every message. */
export interface CallContext {
  requestId: string;
  appId?: string;
  playerId?: string;
  /** W3C trace context, passed through unchanged. */
  traceparent?: string;
}

export const HEADER = {
  requestId: 'ccs-request-id',
  appId: 'ccs-app-id',
  playerId: 'ccs-player-id',
  traceparent: 'traceparent',
} as const;

/** A context that must name an app (every tenant-scoped handler). */
export function requireApp(ctx: CallContext): string {
  if (!ctx.appId) throw new Error('call context has no app id');
  return ctx.appId;
}

export const UuidSchema = z.string().uuid();
/** Money as a decimal string with at most two fraction digits: never a float. */
export const DecimalSchema = z.string().regex(/^\d+(\.\d{1,2})?$/);
export const IsoDateSchema = z.string();
