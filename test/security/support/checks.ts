import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expectJsonApi } from '../../support/jsonapi-schema.js';
import { jsonApiHeaders } from '../../support/stack.js';
import type { HostileCase } from './hostile-cases.js';

/** What must never reach a client: stack traces, file paths, SQL, driver and runtime error names. */
const LEAKS: RegExp[] = [
  /\bError:/,
  /\n\s+at\s/,
  /\bat\s+[\w.<>]+\s+\(/,
  /node_modules/,
  /\/(work|home|usr|app|srv|opt|src|dist)\//,
  /\.(ts|js|mjs|cjs):\d+/,
  /\b(SELECT|INSERT INTO|DELETE FROM)\b|\bUPDATE\s+\w+\s+SET\b/,
  /\bpg_|relation "|syntax error|violates|duplicate key|invalid byte sequence|ECONNREFUSED/i,
  /\b(ZodError|TypeError|RangeError|SyntaxError|ReferenceError|DatabaseError|NatsError|AppError)\b/,
  /"stack"\s*:/,
];

interface ErrorObject {
  status?: string;
  code?: string;
  title?: string;
  source?: { pointer?: string; parameter?: string };
}

/**
 * Everything wrong with one answer to a hostile request (empty when it is as documented): the
 * exact expected status, a status the OpenAPI document lists for the operation, never a 5xx, a
 * JSON:API error document with the JSON:API media type naming the culprit, and no internals or
 * secrets in it.
 */
export function problemsOf(c: HostileCase, res: LightMyRequestResponse, secrets: string[]): string[] {
  const problems: string[] = [];
  const status = res.statusCode;
  const excerpt = res.body.slice(0, 200);
  if (status >= 500) problems.push(`server error ${status}: ${excerpt}`);
  else if (status !== c.expect) problems.push(`status ${status}, expected ${c.expect}: ${excerpt}`);
  if (!c.op.statuses.has(status)) problems.push(`status ${status} is not documented for ${c.op.operationId}`);
  const requestId = String(res.headers['x-request-id'] ?? '');
  if (!/^[A-Za-z0-9._-]{8,128}$/.test(requestId)) problems.push(`x-request-id ${JSON.stringify(requestId)}`);
  const type = String(res.headers['content-type'] ?? '');
  const isJsonApi = type.split(';')[0] === 'application/vnd.api+json';
  if (status >= 400 && !isJsonApi) problems.push(`content type ${type}`);
  if (!isJsonApi) return problems;

  let body: { errors?: ErrorObject[] };
  try {
    body = JSON.parse(res.body);
    expectJsonApi(body);
  } catch (err) {
    return [...problems, `not a JSON:API document: ${(err as Error).message.split('\n')[0]}`];
  }
  if (status < 400) return problems;
  const errors = body.errors ?? [];
  if (errors.length === 0 || errors[0]!.status !== String(status)) problems.push(`errors[0].status is not ${status}`);
  if (errors.some((e) => !e.code || !e.title)) problems.push('an error without code or title');
  if (
    c.source?.parameter &&
    !errors.some((e) => e.source?.parameter && (c.source!.parameter === '*' || e.source.parameter === c.source!.parameter))
  ) {
    problems.push(`no error names the parameter ${c.source.parameter}: ${excerpt}`);
  }
  if (c.source?.pointer !== undefined && !errors.some((e) => e.source?.pointer === c.source!.pointer)) {
    problems.push(`no error points at ${JSON.stringify(c.source.pointer)}: ${excerpt}`);
  }
  for (const leak of LEAKS) if (leak.test(res.body)) problems.push(`leaks ${leak}: ${excerpt}`);
  for (const secret of secrets) if (res.body.includes(secret)) problems.push('echoes a credential');
  return problems;
}

type Inject = (o: InjectOptions) => Promise<LightMyRequestResponse>;

/** The player's state the barrage must not change: balances, inventory, collection, profile, friends, openings, session. */
export async function playerState(inject: Inject, apiKey: string, token: string) {
  const get = async (url: string) => {
    const res = await inject({ method: 'GET', url, headers: jsonApiHeaders(apiKey, token) });
    if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    return res.json() as {
      data: { id: string; attributes: Record<string, any>; meta?: Record<string, any> }[] & { attributes: Record<string, any> };
      meta: Record<string, any>;
    };
  };
  const [currencies, inventory, collection, me, friends, openings, fairness, pity] = await Promise.all([
    get('/api/v1/currencies'),
    get('/api/v1/players/me/chests'),
    get('/api/v1/players/me/collection?page[limit]=100'),
    get('/api/v1/players/me'),
    get('/api/v1/players/me/friends'),
    get('/api/v1/players/me/openings'),
    get('/api/v1/players/me/fairness'),
    get('/api/v1/players/me/pity'),
  ]);
  return {
    balances: Object.fromEntries(currencies.data.map((c) => [c.attributes.code, c.attributes.balance?.amount])),
    inventory: inventory.data.map((c) => c.id).sort(),
    inventoryMeta: inventory.meta,
    collection: collection.data.map((c) => `${c.id}×${c.meta?.owned_count}`).sort(),
    collectionMeta: {
      total_count: collection.meta.total_count,
      total_copies: collection.meta.total_copies,
      collections: collection.meta.collections,
    },
    player: me.data.attributes,
    friends: friends.data.map((f) => `${f.id}:${f.meta?.status}`),
    openings: openings.meta.total_count,
    fairness: (fairness.data as unknown as { attributes: Record<string, unknown> }).attributes,
    pity: pity.data.map((g) => `${g.id}:${g.attributes.opens_since}`),
  };
}
