import type { Baseline, Mutation } from './hostile-cases.js';
import { closedObjectsOf, leavesOf, withValue, type OpView, type Rng, type Schema } from './operations.js';

const JSONAPI = 'application/vnd.api+json';

/** A body mutation: on the real target (it must be refused) or on the safe call (it must answer like it). */
export type BodyCase = { on: 'target'; m: Mutation } | { on: 'safe'; m: Omit<Mutation, 'expect'> };

const pointerOf = (path: string[]) => '/' + path.join('/');

/** Values of one body member that its schema refuses (each a 422 pointing at it). */
function badValues(schema: Schema, current: unknown, rng: Rng): [string, unknown][] {
  const out: [string, unknown][] = [
    ['null', null],
    ['an array', ['x']],
    ['an object', { $gt: '' }],
    ['a boolean', true],
  ];
  if (schema.type === 'string') {
    // NUL inside the valid value, so that only the NUL is wrong with it (an email stays an email).
    const nul = typeof current === 'string' && current.length > 1 ? `${current.slice(0, 1)}\u0000${current.slice(1)}` : 'a\u0000b';
    out.push(['a number', 12345], ['20000 characters', 'A'.repeat(20_000)], ['a NUL character', nul]);
    if (schema.const !== undefined) out.push(['another type', 'hacker'], ['an empty type', '']);
    if (schema.enum) out.push(['upper-cased', String(schema.enum[0]).toUpperCase()], ['empty', '']);
    if (schema.format === 'uuid') out.push(['not a UUID', 'not-a-uuid'], ['a UUID with a suffix', `${rng.uuid()}x`]);
    if (schema.pattern && typeof current === 'string')
      out.push(['with a trailing newline', `${current}\n`], ['with a leading space', ` ${current}`], ['empty', '']);
    // Decimal strings: every near miss of the pattern, and values only the service can judge.
    if (schema.pattern?.includes('\\d')) {
      for (const v of [
        '-1',
        '1e3',
        '1.234',
        '0x10',
        '１０',
        'NaN',
        'Infinity',
        '1,5',
        '+1',
        '.5',
        '0',
        '0.00',
        '9'.repeat(40),
        '99999999999999999999.99',
      ]) {
        out.push([`decimal ${JSON.stringify(v)}`, v]);
      }
    }
  } else {
    out.push(['a numeric string', '1'], ['a fraction', 1.5], ['1e308', 1e308]);
    if (schema.minimum !== undefined) out.push(['below the minimum', schema.minimum - 1]);
    if (schema.maximum !== undefined) out.push(['above the maximum', schema.maximum + 1]);
  }
  return out;
}

/** Inserts raw JSON members at the start of the object at `path` of a serialised body. */
function insertRaw(body: unknown, path: string[], members: string): string {
  const marker = { '\u0001marker': true };
  const text = JSON.stringify(path.length ? withValue(body, [...path, '\u0001marker'], true) : { ...marker, ...(body as object) });
  return text.replace('"\\u0001marker":true', members);
}

/**
 * The body mutations of an operation: wrong media types, bodies that are not JSON or not an
 * object, missing or mistyped members (from the documented request schema), prototype-pollution
 * keys, oversized and deeply nested bodies, and extra members (refused only by closed objects).
 */
export function bodyCases(op: OpView, base: Baseline, rng: Rng): BodyCase[] {
  const out: BodyCase[] = [];
  const target = (m: Mutation) => out.push({ on: 'target', m });
  const safe = (m: Omit<Mutation, 'expect'>) => out.push({ on: 'safe', m });
  const mediaType = op.body?.mediaType ?? JSONAPI;
  const valid = base.target.body === undefined ? '{}' : JSON.stringify(base.target.body);

  // Media types: the route's own, without parameters (plain JSON on credit may carry charset).
  const wrongTypes: [string, string | undefined, string][] = [
    ['text/plain', 'text/plain', valid],
    ['application/xml', 'application/xml', '<data type="player"/>'],
    ['form-encoded', 'application/x-www-form-urlencoded', 'data[type]=player'],
    ['multipart', 'multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="data"\r\n\r\n{}\r\n--x--'],
    ['missing', undefined, valid],
    ['the other JSON type', mediaType === JSONAPI ? 'application/json' : JSONAPI, valid],
    ['JSON:API with an ext parameter', `${JSONAPI}; ext="https://example.com/ext"`, valid],
  ];
  if (mediaType === JSONAPI) wrongTypes.push(['JSON:API with charset', `${JSONAPI}; charset=utf-8`, valid]);
  for (const [name, type, payload] of wrongTypes) {
    target({ name: `Content-Type ${name}`, headers: { 'content-type': type }, payload, expect: 415 });
  }
  if (mediaType === 'application/json') {
    safe({ name: 'Content-Type application/json with charset', headers: { 'content-type': 'application/json; charset=utf-8' } });
  }
  target({
    name: 'body over the size limit',
    payload: JSON.stringify({ pad: 'a'.repeat(70_000) }),
    headers: { 'content-type': mediaType },
    expect: 413,
  });
  for (const [name, payload] of [
    ['not JSON', '{"data":'],
    ['JSON with single quotes', "{'data':1}"],
    ['a NUL byte', '\u0000'],
  ]) {
    target({ name: `body ${name}`, payload, headers: { 'content-type': mediaType }, expect: 400 });
  }
  if (!op.body) return out;

  // Bodies that are not JSON, not an object, or without the members the route needs.
  const malformed = ['{', 'NaN', '{"data":{"type":"x",}}', '<xml/>', '{"a":1}garbage', '{"data":undefined}'];
  for (const payload of malformed) target({ name: `malformed body ${JSON.stringify(payload)}`, payload, expect: 400 });
  if (op.body.required) target({ name: 'empty body', payload: '', expect: 400, source: { pointer: '' } });
  else safe({ name: 'empty body (optional here)', payload: '' });
  for (const payload of ['42', 'null', '"data"', 'true', '-0']) target({ name: `body ${payload}`, payload, expect: 400, source: { pointer: '' } });
  for (const payload of ['[]', `[${valid}]`, '{}', '{"data":null}', '{"data":[]}', '{"data":"x"}', '{"data":{}}']) {
    target({ name: `body ${payload.slice(0, 30)}`, payload, expect: 422 });
  }
  const nested = `{"data":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
  target({ name: 'body nested 10000 levels', payload: nested, expect: 422 });
  const firstKey = Object.keys(base.target.body as object)[0]!;
  target({ name: 'duplicated member (the last one wins)', payload: `${valid.slice(0, -1)},${JSON.stringify(firstKey)}:"x"}`, expect: 422 });

  // Prototype-pollution keys, at the top and inside every object of the body.
  for (const { path } of closedObjectsOf(op.body.schema)) {
    if (path.length && (base.target.body as Record<string, unknown>)[path[0]!] === undefined) continue;
    const at = path.length ? pointerOf(path) : 'the top';
    target({ name: `__proto__ at ${at}`, payload: insertRaw(base.target.body, path, '"__proto__":{"polluted":"yes"}'), expect: 400 });
    target({
      name: `constructor.prototype at ${at}`,
      payload: insertRaw(base.target.body, path, '"constructor":{"prototype":{"polluted":"yes"}}'),
      expect: 400,
    });
  }

  // Every documented member: wrong types, out of range, too long, missing.
  for (const leaf of leavesOf(op.body.schema)) {
    const current = leaf.path.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], base.target.body);
    const pointer = pointerOf(leaf.path);
    for (const [name, value] of badValues(leaf.schema, current, rng)) {
      target({
        name: `${pointer} ${name}`,
        payload: JSON.stringify(withValue(base.target.body, leaf.path, value)),
        expect: 422,
        source: { pointer },
      });
    }
    if (leaf.required) {
      target({
        name: `${pointer} missing`,
        payload: JSON.stringify(withValue(base.target.body, leaf.path, undefined)),
        expect: 422,
        source: { pointer },
      });
    }
  }

  // Extra members: refused by the closed objects of the schema, ignored by the others.
  for (const { path, closed } of closedObjectsOf(op.body.schema)) {
    const at = path.length ? pointerOf(path) : 'the top';
    if (closed) {
      target({
        name: `extra member at ${at} (closed)`,
        payload: JSON.stringify(withValue(base.target.body, [...path, 'is_admin'], true)),
        expect: 422,
      });
    } else if (path.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], base.safe.body) !== undefined) {
      safe({ name: `extra member at ${at}`, payload: JSON.stringify(withValue(base.safe.body, [...path, 'is_admin'], true)) });
      safe({
        name: `extra JSON:API members at ${at}`,
        payload: JSON.stringify(withValue(base.safe.body, [...path, 'meta'], { note: rng.unicode(10) })),
      });
    }
  }
  return out;
}
