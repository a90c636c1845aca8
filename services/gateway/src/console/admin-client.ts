import type { FastifyRequest } from 'fastify';

/** What a call of the admin API answered: its status and JSON:API document (or nothing, for a 204). */
export interface ApiAnswer {
  status: number;
  // The documents are the admin API's, described in its OpenAPI document; the pages read them as such.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * Calls the admin API in-process (Fastify's inject), with the signed-in app's secret key: the
 * console shows exactly what the API answers, goes through the same checks, and every call is in
 * the app's audit log. The key never leaves the server.
 */
export async function adminApi(
  request: FastifyRequest,
  secretKey: string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  body?: { json: unknown; type?: 'jsonapi' | 'json' },
): Promise<ApiAnswer> {
  const res = await request.server.inject({
    method,
    url,
    headers: {
      apikey: secretKey,
      accept: 'application/vnd.api+json',
      ...(body ? { 'content-type': body.type === 'json' ? 'application/json' : 'application/vnd.api+json' } : {}),
    },
    ...(body ? { payload: JSON.stringify(body.json) } : {}),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
}

/** The errors of a failed answer, one line each: "detail (pointer)". */
export function errorLines(a: ApiAnswer): string[] {
  const errors = (a.body?.errors ?? []) as { title?: string; detail?: string; code?: string; source?: { pointer?: string; parameter?: string } }[];
  if (errors.length === 0) return [`The API answered ${a.status}.`];
  return errors.map((e) => {
    const where = e.source?.pointer ?? e.source?.parameter;
    return `${e.detail ?? e.title ?? e.code ?? 'Error'}${where ? ` (at ${where})` : ''}`;
  });
}
