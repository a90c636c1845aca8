import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { ErrorObject } from '../resources/jsonapi.js';

/** The methods the console calls the admin API with. */
export type Method = 'get' | 'post' | 'patch' | 'delete';

/**
 * One admin API call: its method, path (with `{name}` parameters), the status that means success,
 * and the response schema of the route (the resource module's zod schema the route renders by),
 * which types the answer; none for an answer without a body (204) or one the caller does not read.
 */
export interface Call<S extends z.ZodType | undefined> {
  method: Method;
  path: `/api/v1/${string}`;
  success: number;
  shape?: S;
}

/** The document an answer holds on success: the output of the call's response schema. */
export type DocumentOf<S extends z.ZodType | undefined> = S extends z.ZodType ? z.output<S> : undefined;

export type { ErrorObject };

/** What a call answered: the documented document on its success status, else the status and its errors. */
export type ApiAnswer<D> = { ok: true; status: number; doc: D } | Failure;
/** A call that did not answer its success status. */
export interface Failure {
  ok: false;
  status: number;
  errors: ErrorObject[];
}

/** What a call sends besides its method and path: path parameters, a query string, a body. */
export interface CallOptions {
  params?: Record<string, string | number>;
  /** The query string, without `?` (e.g. `page[limit]=50`). */
  query?: string;
  /** The body, sent as JSON:API (or as plain JSON with `type: 'json'`); the API validates it. */
  json?: unknown;
  type?: 'jsonapi' | 'json';
}

/** `/api/v1/admin/players/{id}` with `{ id }`: each parameter percent-encoded into its place. */
function urlOf(path: string, params: unknown, query: string | undefined): string {
  const values = new Map(typeof params === 'object' && params !== null ? Object.entries(params).map(([k, v]) => [k, String(v)]) : []);
  const filled = path.replace(/\{([a-z_]+)\}/g, (_m, name: string) => encodeURIComponent(values.get(name) ?? ''));
  return query ? `${filled}?${query}` : filled;
}

const ErrorBody = (body: unknown): ErrorObject[] => {
  if (typeof body !== 'object' || body === null || !('errors' in body) || !Array.isArray(body.errors)) return [];
  return body.errors.filter((e): e is ErrorObject => typeof e === 'object' && e !== null);
};

/**
 * Calls the admin API in-process (Fastify's inject), with the signed-in app's secret key: the
 * console shows exactly what the API answers, goes through the same checks, and every call is in
 * the app's audit log. The key never leaves the server. The answer on `success` is typed by the
 * call's response schema, the one the route renders by and the OpenAPI document is built from
 * (openapi.test.ts checks real answers against the document), so the pages read typed documents.
 */
export async function adminApi<S extends z.ZodType | undefined = undefined>(
  request: FastifyRequest,
  secretKey: string,
  call: Call<S>,
  options: CallOptions = {},
): Promise<ApiAnswer<DocumentOf<S>>> {
  const res = await request.server.inject({
    method: call.method.toUpperCase(),
    url: urlOf(call.path, options.params, options.query),
    headers: {
      apikey: secretKey,
      accept: 'application/vnd.api+json',
      ...(options.json !== undefined ? { 'content-type': options.type === 'json' ? 'application/json' : 'application/vnd.api+json' } : {}),
    },
    ...(options.json !== undefined ? { payload: JSON.stringify(options.json) } : {}),
  });
  const body: unknown = res.body ? JSON.parse(res.body) : undefined;
  if (res.statusCode !== call.success) return { ok: false, status: res.statusCode, errors: ErrorBody(body) };
  // The one place an answer takes its documented type: the route that rendered it is the API's own.
  return { ok: true, status: res.statusCode, doc: body as DocumentOf<S> };
}

/** The errors of a failed answer, one line each: "detail (at pointer)". */
export function errorLines(a: Failure): string[] {
  if (a.errors.length === 0) return [`The API answered ${a.status}.`];
  return a.errors.map((e) => {
    const where = e.source?.pointer ?? e.source?.parameter;
    return `${e.detail ?? e.title ?? e.code ?? 'Error'}${where ? ` (at ${where})` : ''}`;
  });
}
