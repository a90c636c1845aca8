import { bodyCases } from './body-cases.js';
import type { OpView, Rng } from './operations.js';

const JSONAPI = 'application/vnd.api+json';

/** A request of an operation: its path values, its player (Bearer token) and its body. */
export interface Target {
  params: Record<string, string>;
  token?: string;
  body?: unknown;
  /** The apikey to send instead of the player's app key (the admin API's secret key). */
  apiKey?: string;
}

/**
 * How each operation is called in the barrage. `target` is the real thing (the player's starter
 * chest, a real currency, the player's own session): a hostile variant of it that got through
 * would change the player's state, which the test then sees. `safe` is a call whose answer is
 * harmless (an unknown id, a taken email, a wrong password) and documented as `safeStatus`;
 * variants that the API legitimately accepts (extra members, an Accept it does not insist on)
 * are sent on it and must answer just like it.
 */
export interface Baseline {
  target: Target;
  safe: Target;
  safeStatus: number;
}

/** One hostile request and the documented status it must get. */
export interface HostileCase {
  name: string;
  op: OpView;
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  payload?: string;
  expect: number;
  /** What a 400/422 must name: the path/query parameter or the body member. */
  source?: { parameter?: string; pointer?: string };
}

/** One change to a baseline request. */
export interface Mutation {
  name: string;
  params?: Record<string, string>;
  query?: string;
  headers?: Record<string, string | string[] | undefined>;
  /** The raw body; null sends none. Defaults to the baseline's body. */
  payload?: string | null;
  expect: number;
  source?: HostileCase['source'];
}

export interface Context {
  apiKey: string;
  token: string;
  rng: Rng;
}

/** The request of a baseline with one mutation applied. */
export function hostile(op: OpView, base: Target, ctx: Context, m: Mutation): HostileCase {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => m.params?.[name] ?? encodeURIComponent(base.params[name]!));
  const payload = m.payload === null ? undefined : (m.payload ?? (base.body === undefined ? undefined : JSON.stringify(base.body)));
  const headers: Record<string, string | string[] | undefined> = { accept: JSONAPI };
  if (op.apiKey) headers.apikey = base.apiKey ?? ctx.apiKey;
  if (base.token) headers.authorization = `Bearer ${base.token}`;
  if (payload !== undefined) headers['content-type'] = op.body?.mediaType ?? JSONAPI;
  Object.assign(headers, m.headers);
  const sent = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as HostileCase['headers'];
  return {
    name: `${op.operationId}: ${m.name}`,
    op,
    method: op.method,
    url: m.query === undefined ? path : `${path}?${m.query}`,
    headers: sent,
    payload,
    expect: m.expect,
    source: m.source,
  };
}

/** Tokens that look like Bearer tokens and are not valid ones (garbage, tampered, expired-looking, other algorithms). */
function badTokens(token: string, rng: Rng): Record<string, string | string[]> {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  const kid = JSON.parse(Buffer.from(header, 'base64url').toString()).kid;
  return {
    garbage: `Bearer ${rng.b64(40)}`,
    empty: 'Bearer ',
    'scheme only': 'Bearer',
    'Basic scheme': 'Basic dXNlcjpwYXNz',
    'lowercase scheme': `bearer ${token}`,
    'three dots': 'Bearer a.b.c',
    'very long': `Bearer ${rng.b64(4000)}`,
    unicode: `Bearer ${rng.unicode(12)}`,
    'tampered signature': `Bearer ${header}.${payload}.${signature.slice(0, -4)}AAAA`,
    'expired-looking (exp in the past, re-encoded)': `Bearer ${header}.${b64({ ...claims, exp: 1_000_000_000, iat: 999_999_000 })}.${signature}`,
    'other player, same signature': `Bearer ${header}.${b64({ ...claims, sub: rng.uuid() })}.${signature}`,
    'alg none': `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
    'HS256 with the kid': `Bearer ${b64({ alg: 'HS256', typ: 'JWT', kid })}.${payload}.${rng.b64(43)}`,
    'garbage first, then the valid one': [`Bearer ${rng.b64(40)}`, `Bearer ${token}`],
  };
}

/** Malformed values of one path parameter and the status each must get. */
function pathValues(param: { name: string; uuid: boolean }, rng: Rng, notFound: number): [string, string, number][] {
  const bad = param.uuid ? 400 : notFound;
  return [
    ['not a UUID', 'not-a-uuid', bad],
    ['digits', '12345', bad],
    ['unicode', encodeURIComponent(rng.unicode(6)), bad],
    ['encoded NUL', '%00', bad],
    ['NUL inside', `abc%00${rng.uuid()}`, bad],
    ['traversal', '..%2F..%2Fetc%2Fpasswd', bad],
    ['SQL-ish', encodeURIComponent("x' OR 1=1--"), bad],
    ['template literal', '%7Bid%7D', bad],
    ['300 characters', 'a'.repeat(300), bad],
    ['over 500 characters', 'a'.repeat(501), 414],
    ['broken percent-encoding', '%E0%A4%A', 400],
    ['unknown but valid UUID', rng.uuid(), notFound],
    ['nil UUID', '00000000-0000-0000-0000-000000000000', notFound],
    ['UUID with a suffix', `${rng.uuid()}x`, bad],
  ];
}

/** Query strings no route accepts: unknown, duplicated, array-valued, deeply nested, out of range. */
function badQueries(rng: Rng): [string, string][] {
  const deep = (n: number) => `filter${'[not]'.repeat(n)}[name]=x`;
  return [
    ['unknown parameter', 'unknown=1'],
    ['duplicated parameter', 'include=x&include=x'],
    ['array-valued parameter', 'sort[]=name'],
    ['nested fields', 'fields[x][y]='],
    ['fields as a list', 'fields[]=name'],
    ['negative page limit', 'page[limit]=-1'],
    ['huge page limit', 'page[limit]=1e9'],
    ['page limit not a number', 'page[limit]=abc'],
    ['page offset overflow', 'page[offset]=99999999999999999999'],
    ['unknown page member', 'page[size]=10'],
    ['page as a value', 'page=1'],
    ['empty sort keys', 'sort=,,,'],
    ['sort on an unknown field', `sort=-${rng.b64(8)}`],
    ['filter nested 10 levels', deep(10)],
    ['logical filter nested 10 levels', `filter${'[and][0]'.repeat(10)}[name]=x`],
    ['filter on an unknown field', 'filter[password]=x'],
    ['filter value with NUL', 'filter[name]=a%00b'],
    ['filter operand with NUL', 'filter[collection_id][contains]=%00'],
    ['filter list with NUL', 'filter[rarity]=rare,%00'],
    ['include *', 'include=*'],
    ['include traversal', 'include=chests.owner.password'],
    ['prototype key', '__proto__[polluted]=1'],
    ['encoded prototype key', '%5F%5Fproto%5F%5F=1'],
    ['nested prototype key', 'fields[__proto__]=name'],
    ['constructor key', 'constructor[prototype][polluted]=1'],
    ['Object.prototype member name', 'hasOwnProperty=1'],
    ['unicode parameter name', `${encodeURIComponent(rng.unicode(3))}=1`],
    ['NUL parameter name', '%00=1'],
    ['SQL-ish parameter', `${encodeURIComponent("sort' OR 1=1--")}=1`],
    ['very long value', `sort=${'a'.repeat(5000)}`],
    ['250 parameters', Array.from({ length: 250 }, (_, i) => `p${i}=${i}`).join('&')],
    ['broken percent-encoding', 'sort=%E0%A4%A'],
  ];
}

/** Every hostile request of one operation. */
export function casesFor(op: OpView, base: Baseline, ctx: Context): HostileCase[] {
  const { rng } = ctx;
  const out: HostileCase[] = [];
  const add = (t: Target, m: Mutation) => out.push(hostile(op, t, ctx, m));
  const onTarget = (m: Mutation) => add(base.target, m);
  const onSafe = (m: Omit<Mutation, 'expect'>) => add(base.safe, { ...m, expect: base.safeStatus });

  // Content negotiation: JSON:API with media type parameters is refused; other Accepts are not.
  onTarget({ name: 'Accept with an ext parameter', headers: { accept: `${JSONAPI}; ext="https://example.com/ext"` }, expect: 406 });
  onTarget({ name: 'Accept with only parameterised JSON:API', headers: { accept: `${JSONAPI};charset=utf-8, ${JSONAPI}; profile=x` }, expect: 406 });
  onSafe({ name: 'Accept text/html', headers: { accept: 'text/html' } });
  onSafe({ name: 'Accept with a q weight', headers: { accept: `${JSONAPI};q=0.5, */*;q=0.1` } });
  onSafe({ name: 'X-Request-Id with markup', headers: { 'x-request-id': '<script>alert(1)</script>' } });

  // The apikey, and Bearer tokens: refused on every operation that takes a key, ignored elsewhere.
  const keys: Record<string, string | string[] | undefined> = {
    missing: undefined,
    empty: '',
    garbage: rng.b64(24),
    'over 200 characters': rng.b64(201),
    'SQL-ish': "' OR 1=1--",
    unicode: rng.unicode(8),
    'sent twice': [ctx.apiKey, ctx.apiKey],
    'with a suffix': `${ctx.apiKey}x`,
    'upper-cased': ctx.apiKey.toUpperCase(),
  };
  for (const [name, apikey] of Object.entries(keys)) {
    if (op.apiKey) onTarget({ name: `apikey ${name}`, headers: { apikey }, expect: 401 });
  }
  if (!op.apiKey) onSafe({ name: 'garbage apikey (not needed here)', headers: { apikey: rng.b64(24) } });
  for (const [name, authorization] of Object.entries(badTokens(ctx.token, rng))) {
    if (op.apiKey) onTarget({ name: `Authorization ${name}`, headers: { authorization }, expect: 401 });
  }
  if (!op.apiKey) onSafe({ name: 'garbage Bearer token (not needed here)', headers: { authorization: `Bearer ${rng.b64(40)}` } });
  if (op.tokenRequired) onTarget({ name: 'no Bearer token', headers: { authorization: undefined }, expect: 401 });

  // Path parameters.
  for (const param of op.pathParams) {
    for (const [name, value, expect] of pathValues(param, rng, 404)) {
      onTarget({
        name: `path ${param.name} ${name}`,
        params: { [param.name]: value },
        expect,
        source: expect === 400 && name !== 'broken percent-encoding' ? { parameter: param.name } : undefined,
      });
    }
  }

  // Query strings: a 400 naming the parameter where the route reads the query; ignored elsewhere.
  for (const [name, query] of badQueries(rng)) {
    if (op.readsQuery)
      onTarget({ name: `query ${name}`, query, expect: 400, source: name === 'broken percent-encoding' ? undefined : { parameter: '*' } });
    else onSafe({ name: `query ${name} (not read here)`, query });
  }

  // Idempotency-Key: 1 to 255 printable ASCII characters.
  if (op.idempotencyKey) {
    const keysBad: Record<string, string | string[]> = {
      '256 characters': 'k'.repeat(256),
      'non-ASCII': 'clé-1',
      Cyrillic: 'ключ',
      emoji: `order-${rng.unicode(2)}`,
      empty: '',
      'with a space': 'order 1',
      'with a tab': 'order\t1',
      'sent twice': ['order-1', 'order-2'],
    };
    for (const [name, key] of Object.entries(keysBad))
      onTarget({ name: `Idempotency-Key ${name}`, headers: { 'idempotency-key': key }, expect: 400 });
  }

  // Bodies: media types, then the body itself.
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(op.method)) {
    for (const c of bodyCases(op, base, rng)) {
      if (c.on === 'target') onTarget(c.m);
      else onSafe(c.m);
    }
  }
  return out;
}
