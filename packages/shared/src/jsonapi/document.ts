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
 * Applies a sparse fieldset (`fields[type]=a,b`) to a resource: attributes and relationships not
 * listed are dropped; `id` and `type` always stay, as JSON:API requires.
 */
export function applyFieldset(r: Resource, fields: Record<string, string[]>): Resource {
  const wanted = fields[r.type];
  if (!wanted) return r;
  return { ...r, attributes: pick(r.attributes, wanted), relationships: pick(r.relationships, wanted) };
}

/** The members of `o` named in `wanted` (a handful of validated field names), in `o`'s order. */
function pick<T>(o: Record<string, T>, wanted: readonly string[]): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(o)) if (wanted.includes(k)) out[k] = o[k]!;
  return out;
}
