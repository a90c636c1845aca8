import { headers as natsHeaders, type MsgHdrs } from 'nats';
import { randomUUID } from 'node:crypto';
import { HEADER, type CallContext } from '../contracts/context.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** JSON to bytes for NATS payloads. */
export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** Bytes to JSON; an empty or malformed payload gives undefined, for the schema to reject. */
export function decodeJson(data: Uint8Array): unknown {
  if (data.length === 0) return undefined;
  try {
    return JSON.parse(decoder.decode(data));
  } catch {
    return undefined;
  }
}

/** Writes a call context into NATS headers. */
export function contextToHeaders(ctx: CallContext, into: MsgHdrs = natsHeaders()): MsgHdrs {
  into.set(HEADER.requestId, ctx.requestId);
  if (ctx.appId) into.set(HEADER.appId, ctx.appId);
  if (ctx.playerId) into.set(HEADER.playerId, ctx.playerId);
  if (ctx.traceparent) into.set(HEADER.traceparent, ctx.traceparent);
  return into;
}

/**
 * Reads a call context from NATS headers (a fresh request id when none came); a request's budget
 * (`ccs-budget-ms`) becomes its deadline, counted from now (`now`, for tests).
 */
export function contextFromHeaders(h: MsgHdrs | undefined, now = Date.now()): CallContext {
  const get = (k: string) => {
    const v = h?.get(k);
    return v ? v : undefined;
  };
  const raw = get(HEADER.budget);
  const budget = raw === undefined ? NaN : Number(raw);
  return {
    requestId: get(HEADER.requestId) ?? randomUUID(),
    appId: get(HEADER.appId),
    playerId: get(HEADER.playerId),
    traceparent: get(HEADER.traceparent),
    ...(Number.isFinite(budget) && budget >= 0 ? { deadline: now + budget } : {}),
  };
}
