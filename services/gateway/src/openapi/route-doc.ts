import type { z } from 'zod';
import type { QuerySpec } from '@ccs/shared';

/**
 * What each route says about itself for the OpenAPI document. A route attaches a RouteDoc as
 * `config.openapi`; the request side (query spec, body schema) is the very object the route parses
 * with, the response side is written in ./operations. Routes without one are missing from the
 * document, which the gateway's openapi test refuses.
 */

/** The document's tags: one per resource, plus the gateway's own routes. */
export const TAGS = {
  Players: 'Registration, sessions, guests and the calling player.',
  Friends: "The calling player's friends: a request is confirmed when the other player requests back.",
  Chests: 'The chest catalog, odds, opening and purchase.',
  Banners: 'Gacha banners: a featured rate-up on a chest type for a time, with its guarantee, pity and spark (docs/design.md §8).',
  Inventory: "Players' unopened chests and the calling player's openings.",
  Mailbox: "Chests granted while the calling player's inventory was full, waiting to be claimed.",
  Collections: "Collections and the calling player's collection.",
  Collectibles: 'Collectibles of the app.',
  Currencies: 'Currencies, balances and credits.',
  Trades:
    'Trades between players: one copy for one copy, paid in trade tokens, with escrow while an offer is open; dissolving copies into tokens (docs/content.md, "Trading").',
  Store:
    "App Store and Google Play purchases, verified and granted exactly once; the stores' refund notifications, which take back what a refunded purchase granted (docs/store.md).",
  Admin:
    "For the studio's own tools, with the app's secret key (never a publishable key or a player token): the app's figures, finding and looking up players, currency and chest grants, ending sessions, locking players, content versions, odds simulation, webhooks, the audit log of every action.",
  Fairness: "Verifiable randomness (commit-reveal) and pity: the calling player's seeds, counters and the verification of their openings.",
  Health: 'Probes for load balancers and orchestrators; no apikey needed.',
  Documentation: 'This document; no apikey needed.',
} as const;
/** One of the document's tags. */
export type Tag = keyof typeof TAGS;

/** The media types the gateway answers with: JSON:API, plain JSON (credit, probes), text (metrics). */
export type MediaType = 'application/vnd.api+json' | 'application/json' | 'text/plain';

/** Statuses a route may fail with. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 406 | 409 | 413 | 414 | 415 | 422 | 429 | 500 | 503 | 504;

/** A path or header parameter. */
export interface ParamDoc {
  schema: z.ZodType;
  description: string;
  example?: string;
}

/** One successful answer. */
export interface SuccessDoc {
  status: number;
  description: string;
  /** Usually a registered component (./components.ts); none for an empty body (204). */
  schema?: z.ZodType;
  /** Defaults to the JSON:API media type. */
  mediaType?: MediaType;
  /** Response headers beyond `x-request-id` (which every answer has). */
  headers?: Record<string, { description: string; schema: z.ZodType }>;
}

/** The response side and meaning of a route, written once per operation in ./operations. */
export interface OperationDoc {
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  /** Whether the route needs a player's Bearer token, takes one optionally, or ignores it. */
  token: 'required' | 'optional' | 'none';
  /** Schema of each path parameter, by name: every `:name` of the route must be here. */
  params?: Record<string, ParamDoc>;
  /** Request headers the route reads (besides apikey and Authorization). */
  headers?: Record<string, ParamDoc>;
  responses: SuccessDoc[];
  /**
   * The route waits in players' bounded password queue (register, login): it may answer 503
   * `overloaded` with `Retry-After`.
   */
  passwordQueue?: boolean;
  /** Failures particular to this route, by status: one line each saying when, with its code. */
  errors?: Partial<Record<ErrorStatus, string[]>>;
  /** An example request body. */
  bodyExample?: unknown;
}

/** The request side: the same objects the route validates with. */
export interface RequestDoc {
  /** The query members the route accepts (anything else is a 400); null when it never reads the query. */
  query: QuerySpec | null;
  /** The body schema; its media type is the route's `config.bodyType` (JSON:API when unset). */
  body?: { schema: z.ZodType; required: boolean };
}

/** Everything the document says about one route. */
export interface RouteDoc extends OperationDoc, RequestDoc {}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's documentation (see services/gateway/src/openapi). */
    openapi?: RouteDoc;
  }
}

/** A route that accepts no query members at all (any is a 400). */
export const NO_QUERY: QuerySpec = {};

/** Joins an operation's documentation with what its route validates. */
export function documented(op: OperationDoc, request: RequestDoc): RouteDoc {
  return { ...op, ...request };
}

/** The same operation at a second path or method (the spec's unprefixed aliases, POST open). */
export function variantOf(op: OperationDoc, operationId: string, note: string): OperationDoc {
  return { ...op, operationId, description: [op.description, note].filter(Boolean).join('\n\n') };
}
