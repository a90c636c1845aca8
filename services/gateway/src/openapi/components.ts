import { z } from 'zod';

/** A JSON Schema (2020-12) object as it appears in the OpenAPI document. */
export type JsonSchema = Record<string, unknown>;

/** Metadata of a named schema: its name under `#/components/schemas` and what it is. */
export interface ComponentMeta {
  id: string;
  description?: string;
}

/**
 * The named response schemas. `components.schemas` is generated from this registry in one pass, so
 * a schema used by several documents becomes one component and every use a `$ref` to it.
 */
export const componentRegistry = z.registry<ComponentMeta>();

/** Registers a zod schema as the component `id`, returning it unchanged. */
export function component<S extends z.ZodType>(id: string, description: string, schema: S): S {
  componentRegistry.add(schema, { id, description });
  return schema;
}

/** `$ref` to a component by name. */
export const ref = (id: string): JsonSchema => ({ $ref: `#/components/schemas/${id}` });

// Noise for readers: z.number().int() carries the safe-integer range as bounds, and UUIDs and
// timestamps carry zod's regular expression beside their `format`, which already says it (and
// lets viewers show a realistic example).
function tidy(ctx: { jsonSchema: JsonSchema }): void {
  const s = ctx.jsonSchema;
  if (s.minimum === Number.MIN_SAFE_INTEGER) delete s.minimum;
  if (s.maximum === Number.MAX_SAFE_INTEGER) delete s.maximum;
  if (s.format === 'uuid' || s.format === 'date-time') delete s.pattern;
}

const withoutDialect = ({ $schema: _schema, $id: _id, ...rest }: JsonSchema): JsonSchema => rest;

/** A response schema: a `$ref` to its component when registered, else inline (the output side). */
export function responseSchema(schema: z.ZodType): JsonSchema {
  const meta = componentRegistry.get(schema);
  if (meta) return ref(meta.id);
  return withoutDialect(z.toJSONSchema(schema, { target: 'draft-2020-12', override: tidy }) as JsonSchema);
}

/** Every registered component as JSON Schema 2020-12 (the output side: what the API sends). */
export function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(componentRegistry, {
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
    override: tidy,
  });
  return Object.fromEntries(Object.entries(schemas).map(([id, s]) => [id, withoutDialect(s as JsonSchema)]));
}

/**
 * A schema of something the client sends (body, parameter), inline. The input side: members with
 * defaults are optional, and unknown members are allowed where the schema strips them.
 */
export function inputSchema(schema: z.ZodType): JsonSchema {
  return withoutDialect(z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', override: tidy }) as JsonSchema);
}
