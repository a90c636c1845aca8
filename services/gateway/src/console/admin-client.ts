import type { FastifyRequest } from 'fastify';
import type { components, paths } from '@ccs/client';

/** The admin API's documents, as the generated client schema (packages/client/src/schema.ts) types them. */
export type Schemas = components['schemas'];

/** The methods the console calls the admin API with. */
export type Method = 'get' | 'post' | 'patch' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type Responses<P extends keyof paths, M extends Method> = Operation<P, M> extends { responses: infer R } ? R : never;
type JsonApiOf<R> = R extends { content: { 'application/vnd.api+json': infer D } } ? D : undefined;
type PathParams<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: { path: infer T } } ? T : never;

/** The statuses a path and method are documented to answer. */
export type StatusOf<P extends keyof paths, M extends Method> = keyof Responses<P, M> & number;

/** The document a path and method answer with `status`, from the OpenAPI document. */
export type DocumentOf<P extends keyof paths, M extends Method, S extends keyof Responses<P, M>> = JsonApiOf<Responses<P, M>[S]>;

/** One JSON:API error object of a refused call. */
export type ErrorObject = Schemas['ErrorObject'];

/** What a call answered: the documented document on its success status, else the status and its errors. */
export type ApiAnswer<D> = { ok: true; status: number; doc: D } | Failure;
/** A call that did not answer its success status. */
export interface Failure {
  ok: false;
  status: number;
  errors: ErrorObject[];
}

/** What a call sends besides its method and path: path parameters, a query string, a body. */
export interface CallOptions<P extends keyof paths, M extends Method> {
  params?: PathParams<P, M>;
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
 * the app's audit log. The key never leaves the server. The answer on `success` is typed as the
 * OpenAPI document describes it (the gateway's own routes render it; openapi.test.ts checks that
 * they match the document), so the pages read typed documents.
 */
export async function adminApi<P extends keyof paths, M extends Method, S extends StatusOf<P, M>>(
  request: FastifyRequest,
  secretKey: string,
  call: { method: M; path: P; success: S },
  options: CallOptions<P, M> = {},
): Promise<ApiAnswer<DocumentOf<P, M, S>>> {
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
  return { ok: true, status: res.statusCode, doc: body as DocumentOf<P, M, S> };
}

/** The errors of a failed answer, one line each: "detail (at pointer)". */
export function errorLines(a: Failure): string[] {
  if (a.errors.length === 0) return [`The API answered ${a.status}.`];
  return a.errors.map((e) => {
    const where = e.source?.pointer ?? e.source?.parameter;
    return `${e.detail ?? e.title ?? e.code ?? 'Error'}${where ? ` (at ${where})` : ''}`;
  });
}
