import { z } from 'zod';
import { FILTER_OPS, MAX_FILTER_DEPTH, type QuerySpec } from '@ccs/shared';
import { inputSchema, type JsonSchema } from './components.js';

/** An OpenAPI parameter object. */
export type Parameter = Record<string, unknown>;

const alternatives = (names: readonly string[]) => `(${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`;

/** A comma-separated list of the given names (optionally `-`-prefixed, for sort). */
function listOf(names: readonly string[], signed = false): z.ZodString {
  const one = `${signed ? '-?' : ''}${alternatives(names)}`;
  return z.string().regex(new RegExp(`^${one}(,${one})*$`));
}

const code = (names: readonly string[]) => names.map((n) => `\`${n}\``).join(', ');

const deepObject = (name: string, description: string, schema: JsonSchema, example?: unknown): Parameter => ({
  name,
  in: 'query',
  style: 'deepObject',
  explode: true,
  description,
  schema,
  ...(example === undefined ? {} : { example }),
});

function filterParameter(filter: NonNullable<QuerySpec['filter']>): Parameter {
  const operators = z
    .object(Object.fromEntries(FILTER_OPS.map((op) => [op, z.string()])))
    .partial()
    .strict();
  const condition = z.union([z.string(), operators]);
  const logical = filter.nested
    ? { and: z.record(z.string(), z.unknown()), or: z.record(z.string(), z.unknown()), not: z.record(z.string(), z.unknown()) }
    : {};
  const schema = z
    .object({ ...Object.fromEntries(filter.fields.map((f) => [f, condition])), ...logical })
    .partial()
    .strict();
  const [first = 'name'] = filter.fields;
  const lines = [
    `Filter on ${code(filter.fields)}. \`filter[${first}]=a\` is equality; \`filter[${first}]=a,b\` matches any of them.`,
    filter.nested
      ? `With an operator: \`filter[${first}][<op>]=value\`, op one of ${code(FILTER_OPS)} (\`contains\` and \`starts_with\` ignore case). ` +
        `Several members must all hold; \`filter[or][0][...]=…&filter[or][1][...]=…\`, \`filter[and][i][...]\` (1 to 20 conditions) and \`filter[not][...]\` combine them, nested at most ${MAX_FILTER_DEPTH} levels. ` +
        'Use `curl -g` (or percent-encode the brackets) on the command line.'
      : '',
  ];
  return deepObject('filter', lines.filter(Boolean).join(' '), inputSchema(schema));
}

function pageParameter(page: NonNullable<QuerySpec['page']>): Parameter {
  const schema = z
    .object({
      limit: z.number().int().min(1).max(page.maxLimit).default(page.defaultLimit),
      offset: z.number().int().min(0).max(1_000_000_000).default(0),
    })
    .strict();
  return deepObject(
    'page',
    `Pagination: \`page[limit]\` (1 to ${page.maxLimit}, default ${page.defaultLimit}) and \`page[offset]\` (default 0). The answer's \`links\` name the first, previous, next and last pages.`,
    inputSchema(schema),
    { limit: page.defaultLimit, offset: 0 },
  );
}

/**
 * The query parameters of a route, generated from the QuerySpec it parses with: `include`,
 * `fields[<type>]`, `sort`, `filter`, `page`, and any extra plain parameter. A parameter the spec
 * does not allow is absent (the route answers 400 `unknown_parameter` or `unsupported_*` to it).
 */
export function queryParameters(spec: QuerySpec): Parameter[] {
  const out: Parameter[] = [];
  if (spec.include?.length) {
    out.push({
      name: 'include',
      in: 'query',
      description: `Related resources to add to \`included\`, comma-separated: ${code(spec.include)}.`,
      schema: inputSchema(listOf(spec.include)),
      example: spec.include[0],
    });
  }
  if (spec.fields && Object.keys(spec.fields).length) {
    const types = Object.entries(spec.fields);
    const schema = z
      .object(Object.fromEntries(types.map(([type, names]) => [type, listOf(names).describe(`Any of ${code(names)}.`)])))
      .partial()
      .strict();
    const [type, names] = types[0]!;
    const description = `Sparse fieldsets: \`fields[<type>]=a,b\` keeps only those attributes and relationships of that type's resources (\`type\` and \`id\` always stay). Without it every member is present; the response schemas list them all and require none, so an answer with a sparse fieldset is as documented. Types: ${code(types.map(([t]) => t))}.`;
    out.push(deepObject('fields', description, inputSchema(schema), { [type]: names.slice(0, 2).join(',') }));
  }
  if (spec.sort?.length) {
    out.push({
      name: 'sort',
      in: 'query',
      description: `Sort keys, comma-separated, applied in order; a \`-\` prefix sorts descending. Keys: ${code(spec.sort)}.`,
      schema: inputSchema(listOf(spec.sort, true)),
      example: spec.sort.length > 1 ? `${spec.sort[1]},-${spec.sort[0]}` : spec.sort[0],
    });
  }
  if (spec.filter) out.push(filterParameter(spec.filter));
  if (spec.page) out.push(pageParameter(spec.page));
  for (const name of spec.extra ?? []) out.push({ name, in: 'query', schema: { type: 'string' } });
  return out;
}

/** The 400 codes a route's query can produce, for its error description. */
export function queryErrorLines(spec: QuerySpec): string[] {
  const lines = ['a query parameter this route does not take (`unknown_parameter`)'];
  lines.push(spec.include?.length ? 'an `include` path other than those listed (`unsupported_include`)' : 'any `include` (`unsupported_include`)');
  if (spec.fields) lines.push('a `fields` type or name not listed (`unsupported_fields`)');
  if (spec.sort?.length) lines.push('a `sort` key not listed (`unsupported_sort`)');
  if (spec.filter) lines.push('a `filter` on another field, an unknown operator, too deep or too wide (`invalid_filter`)');
  if (spec.page) lines.push('`page[limit]` or `page[offset]` out of range (`invalid_page`)');
  return lines;
}
