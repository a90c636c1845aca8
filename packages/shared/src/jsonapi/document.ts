export const JSONAPI_MEDIA_TYPE = 'application/vnd.api+json';

export interface ResourceIdentifier {
  type: string;
  id: string;
}

/** A JSON:API resource object. */
export interface Resource {
  type: string;
  id: string;
  attributes: Record<string, unknown>;
  relationships: Record<string, { data?: ResourceIdentifier | ResourceIdentifier[] | null; meta?: Record<string, unknown> }>;
  meta?: Record<string, unknown>;
  links?: Record<string, string>;
}

/**
 * A top-level JSON:API document with primary data (or, for the spec's exceptions, the chest-opening
 * result and the batch of them, plain objects).
 */
export interface Document {
  data: Resource | Resource[] | Record<string, unknown> | Record<string, unknown>[];
  included?: Resource[];
  meta?: Record<string, unknown>;
  links?: Record<string, string | null>;
}

/** Builds a resource object; relationships default to an empty object, as the spec shows. */
export function resource(
  type: string,
  id: string,
  attributes: Record<string, unknown>,
  relationships: Resource['relationships'] = {},
  meta?: Record<string, unknown>,
): Resource {
  const r: Resource = { type, id, attributes, relationships };
  if (meta && Object.keys(meta).length) r.meta = meta;
  return r;
}

/**
 * A resource under a sparse fieldset: any of its attributes and relationships may be left out
 * (the OpenAPI document says the same of every resource that takes `fields[type]`).
 */
export type Sparse<R extends Resource> = Omit<R, 'attributes' | 'relationships'> & {
  attributes: Partial<R['attributes']>;
  relationships: Partial<R['relationships']>;
};

/**
 * Applies a sparse fieldset (`fields[type]=a,b`) to a resource: attributes and relationships not
 * listed are dropped; `id` and `type` always stay, as JSON:API requires.
 */
export function applyFieldset<R extends Resource>(r: R, fields: Record<string, string[]>): Sparse<R> {
  const wanted = fields[r.type];
  if (!wanted) return r;
  return { ...r, attributes: pick(r.attributes, wanted), relationships: pick(r.relationships, wanted) };
}

/** The members of `o` named in `wanted` (a handful of validated field names), in `o`'s order. */
function pick<O extends object>(o: O, wanted: readonly string[]): Partial<O> {
  const out: Partial<O> = {};
  for (const k of Object.keys(o) as (keyof O & string)[]) if (wanted.includes(k)) out[k] = o[k];
  return out;
}
