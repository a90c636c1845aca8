import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  AppError,
  JSONAPI_MEDIA_TYPE,
  parseJsonApiQuery,
  zodIssuesToErrors,
  type CallContext,
  type Document,
  type ParsedQuery,
  type QuerySpec,
} from '@ccs/shared';
import { gatewayErrors } from '../errors.js';

/** The call context a route sends to a service: request id, app and player. */
export function callContext(request: FastifyRequest): CallContext {
  return {
    requestId: request.id,
    appId: request.tenant?.appId,
    playerId: request.player?.id,
    traceparent: typeof request.headers.traceparent === 'string' ? request.headers.traceparent : undefined,
  };
}

/** The app id of an API-key-checked request (every /api route has one). */
export function appIdOf(request: FastifyRequest): string {
  if (!request.tenant) throw gatewayErrors.missingApiKey();
  return request.tenant.appId;
}

/**
 * The calling player of a route of the player scope, whose `requirePlayer` hook already refused
 * a request without one (the 401 here only guards a route registered in the wrong scope).
 */
export function playerOf(request: FastifyRequest): { id: string; anonymous: boolean } {
  if (!request.player) throw gatewayErrors.missingToken();
  return request.player;
}

/** The JSON pointer of a string in a JSON value that contains U+0000, if any (iterative: bodies may nest deeply). */
function nulPointer(body: unknown): string | undefined {
  const pending: [unknown, string][] = [[body, '']];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, at] = next;
    if (typeof value === 'string' && value.includes('\u0000')) return at;
    if (typeof value !== 'object' || value === null) continue;
    const members = Object.entries(value).reverse();
    for (const [key, member] of members) pending.push([member, `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`]);
  }
  return undefined;
}

/**
 * Validates a JSON body; each failing field is a 422 pointing at it (under `pointerPrefix`). Text
 * containing the NUL character is refused first: no service can store it (Postgres text cannot).
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, pointerPrefix = ''): z.infer<S> {
  if (body === undefined || body === null || typeof body !== 'object') {
    throw gatewayErrors.missingBody();
  }
  const nul = nulPointer(body);
  if (nul !== undefined) {
    throw gatewayErrors.nulCharacter(pointerPrefix + nul || '/');
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw AppError.many(zodIssuesToErrors(parsed.error.issues, 'body', pointerPrefix));
  return parsed.data;
}

const UUID = z.string().uuid();

/** Validates a path parameter as a UUID (400 naming the parameter). */
export function uuidParam(request: FastifyRequest, name: string): string {
  const value = (request.params as Record<string, string>)[name];
  if (!value || !UUID.safeParse(value).success) {
    throw gatewayErrors.invalidId(name);
  }
  return value.toLowerCase();
}

/** Parses the JSON:API query members of a request against what the route supports. */
export function jsonApiQuery(request: FastifyRequest, spec: QuerySpec): ParsedQuery {
  return parseJsonApiQuery((request.query ?? {}) as Record<string, unknown>, spec);
}

/** Sends a JSON:API document with the JSON:API media type. */
export function sendDocument(reply: FastifyReply, status: number, doc: Document): FastifyReply {
  return reply.code(status).type(JSONAPI_MEDIA_TYPE).send(doc);
}

/** Absolute base URL for links: PUBLIC_BASE_URL, else the request's own scheme and host. */
export function baseUrl(request: FastifyRequest, configured?: string): string {
  if (configured) return configured.replace(/\/$/, '');
  return `${request.protocol}://${request.host}`;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{8,128}$/;

/** Request ids: a well-formed incoming X-Request-Id is kept, else a new UUID. */
export function genRequestId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The keys a keyed-retry write (opening, batch opening, credit) travels under: the client's
 * Idempotency-Key, or else a `retryKey` made for this request alone, so that the bus may send the
 * write again to another replica after a timeout without applying it twice (a replica lost, not
 * a request). Only a client's key stores an answer and is reported as a replay.
 */
export function writeKeysOf(
  request: FastifyRequest,
): { idempotencyKey: string; retryKey?: undefined } | { idempotencyKey?: undefined; retryKey: string } {
  const idempotencyKey = idempotencyKeyOf(request);
  return idempotencyKey ? { idempotencyKey } : { retryKey: randomUUID() };
}

/** The optional Idempotency-Key header: printable ASCII, 1 to 255 characters, sent once (else 400). */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY.test(value)) {
    throw gatewayErrors.invalidIdempotencyKey();
  }
  return value;
}
