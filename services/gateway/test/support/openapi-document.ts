import { z } from 'zod';

/** Helpers of the OpenAPI test: the document's expected shape, Fastify's route tree, `$ref`s. */

/** HTTP methods an OpenAPI path item may hold. */
export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const JsonObject = z.record(z.string(), z.unknown());

const MediaType = z.object({ schema: JsonObject, example: z.unknown().optional() });

const Response = z.object({
  description: z.string().min(1),
  headers: z.record(z.string(), JsonObject).optional(),
  content: z.record(z.string(), MediaType).optional(),
});

const Parameter = z.object({
  name: z.string().min(1),
  in: z.enum(['path', 'query', 'header', 'cookie']),
  required: z.boolean().optional(),
  description: z.string().optional(),
  schema: JsonObject,
  style: z.string().optional(),
  explode: z.boolean().optional(),
  example: z.unknown().optional(),
});

const Operation = z.object({
  operationId: z.string().min(1),
  tags: z.array(z.string()).min(1),
  summary: z.string().min(1),
  description: z.string().optional(),
  security: z.array(z.record(z.string(), z.array(z.string()))),
  parameters: z.array(Parameter),
  requestBody: z.object({ required: z.boolean(), content: z.record(z.string(), MediaType) }).optional(),
  responses: z.record(z.string().regex(/^[1-5]\d\d$/), Response).refine((r) => Object.keys(r).length > 0, 'no responses'),
});
/** One operation of the document. */
export type Operation = z.infer<typeof Operation>;

/**
 * The part of OpenAPI 3.1 the gateway's document uses, strictly: parsing the served document with
 * it checks its structure (version, paths, operations, parameters, responses, components) and
 * gives the test typed access.
 */
export const OpenApiDocumentSchema = z.strictObject({
  openapi: z.string().regex(/^3\.1\.\d+$/),
  info: z.object({
    title: z.string().min(1),
    version: z.string().min(1),
    description: z.string().optional(),
    // OpenAPI 3.1: a name, and either an SPDX expression or a URL.
    license: z.union([z.object({ name: z.string().min(1), identifier: z.string().min(1) }), z.object({ name: z.string().min(1), url: z.url() })]),
  }),
  servers: z.array(z.object({ url: z.string(), description: z.string().optional() })).min(1),
  tags: z.array(z.object({ name: z.string(), description: z.string() })),
  paths: z.record(z.string().startsWith('/'), z.partialRecord(z.enum(METHODS), Operation)),
  components: z.strictObject({
    schemas: z.record(z.string(), JsonObject),
    headers: z.record(z.string(), JsonObject),
    securitySchemes: z.record(z.string(), JsonObject),
  }),
});
/** The served document, typed. */
export type OpenApiDocument = z.infer<typeof OpenApiDocumentSchema>;

/** Every operation of the document with its path and method. */
export function operationsOf(doc: OpenApiDocument): { path: string; method: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op: op! })));
}

/**
 * Every (method, URL pattern) an app serves, read from Fastify's own route tree
 * (`printRoutes({ commonPrefix: false })`: one line per node, 4 columns per level, each node's
 * text appended to its parent's path): independent of how the document collects its routes.
 */
export function servedRoutes(tree: string): { method: string; url: string }[] {
  const out: { method: string; url: string }[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const url = (stack[depth - 1] ?? '') + m[2]!;
    stack[depth] = url;
    stack.length = depth + 1;
    for (const method of m[3]?.split(', ') ?? []) out.push({ method, url });
  }
  return out;
}

/** Every `$ref` value anywhere in a JSON value. */
export function refsIn(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(refsIn);
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([k, v]) => (k === '$ref' && typeof v === 'string' ? [v] : refsIn(v)));
}

/** What a local `$ref` (`#/a/b`) points at in a JSON value, or undefined. */
export function resolvePointer(root: unknown, ref: string): unknown {
  let node = root;
  for (const key of ref
    .slice(2)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    if (!node || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A JSON pointer fragment (`#/a/b`) from its unescaped parts. */
export const pointer = (...parts: string[]) => '#/' + parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
