import type { OpenApiDocument, Operation } from '../../../services/gateway/test/support/openapi-document.js';
import { operationsOf } from '../../../services/gateway/test/support/openapi-document.js';

/** A JSON Schema as the OpenAPI document writes it (only the members the generator reads). */
export interface Schema {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  anyOf?: Schema[];
}

/** What the barrage needs to know about one operation, read from the OpenAPI document only. */
export interface OpView {
  operationId: string;
  method: string;
  path: string;
  /** Documented statuses (success and error). */
  statuses: Set<number>;
  /** Needs an `apikey` (any security requirement at all). */
  apiKey: boolean;
  /** Every security requirement includes a Bearer token. */
  tokenRequired: boolean;
  /** Documents `unknown_parameter`: the route reads (and refuses unknown) query members. */
  readsQuery: boolean;
  pathParams: { name: string; uuid: boolean }[];
  /** Documents an `Idempotency-Key` request header. */
  idempotencyKey: boolean;
  body?: { mediaType: string; required: boolean; schema: Schema };
}

const isUuid = (s: Schema): boolean => s.format === 'uuid' || (s.anyOf ?? []).some(isUuid);

/** The operations of the document, as the generator sees them. */
export function opViews(doc: OpenApiDocument): OpView[] {
  return operationsOf(doc).map(({ path, method, op }: { path: string; method: string; op: Operation }) => {
    const [mediaType, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
    return {
      operationId: op.operationId,
      method: method.toUpperCase(),
      path,
      statuses: new Set(Object.keys(op.responses).map(Number)),
      apiKey: op.security.length > 0,
      tokenRequired: op.security.length > 0 && op.security.every((r) => 'bearerAuth' in r),
      readsQuery: (op.responses['400']?.description ?? '').includes('unknown_parameter'),
      pathParams: op.parameters.filter((p) => p.in === 'path').map((p) => ({ name: p.name, uuid: isUuid(p.schema as Schema) })),
      idempotencyKey: op.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'),
      body: mediaType && media ? { mediaType, required: op.requestBody!.required, schema: media.schema as Schema } : undefined,
    };
  });
}

/** Deterministic PRNG (mulberry32): the same seed gives the same barrage on every run. */
export function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(16)]).join('');
  const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  return {
    int,
    pick,
    /** A well-formed v4 UUID that names nothing. */
    uuid: () => `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`,
    /** Base64url noise of n characters (token-shaped garbage). */
    b64: (n: number) => Array.from({ length: n }, () => B64URL[int(64)]).join(''),
    /** Text of n characters mixing scripts, emoji, combining and bidi-control characters. */
    unicode: (n: number) => Array.from({ length: n }, () => pick(['ü', '中', '🎁', '\u202e', 'ﬀ', 'e\u0301', 'Ω', 'я', '\u200b'])).join(''),
  };
}
export type Rng = ReturnType<typeof seeded>;

/** Reads the JSON pointer path `/a/b` of a value; sets it in a deep copy (creating objects on the way). */
export function withValue(doc: unknown, pointer: string[], value: unknown): unknown {
  const copy = structuredClone(doc) as Record<string, unknown>;
  let at = copy;
  for (const key of pointer.slice(0, -1)) {
    if (typeof at[key] !== 'object' || at[key] === null) at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  if (value === undefined) delete at[pointer.at(-1)!];
  else at[pointer.at(-1)!] = value;
  return copy;
}

/** The leaf members of a request body schema (strings, numbers, consts), with their paths. */
export function leavesOf(schema: Schema, path: string[] = []): { path: string[]; schema: Schema; required: boolean }[] {
  const out: { path: string[]; schema: Schema; required: boolean }[] = [];
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    const required = (schema.required ?? []).includes(name);
    if (s.type === 'object' && s.properties) out.push(...leavesOf(s, [...path, name]));
    else if (s.type === 'string' || s.type === 'integer' || s.type === 'number') out.push({ path: [...path, name], schema: s, required });
  }
  return out;
}

/** The objects of a body schema (with their paths) that refuse members they do not list. */
export function closedObjectsOf(schema: Schema, path: string[] = []): { path: string[]; closed: boolean }[] {
  const out = [{ path, closed: schema.additionalProperties === false }];
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    if (s.type === 'object' && s.properties) out.push(...closedObjectsOf(s, [...path, name]));
  }
  return out;
}
