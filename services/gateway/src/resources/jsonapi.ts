import { z } from 'zod';
import { component } from '../openapi/components.js';

/**
 * The JSON:API building blocks every document of the API uses: identifiers, links, page meta and
 * the error document.
 */

/** A resource identifier of one type (`{type, id}`), as relationships carry it. */
export const identifierOf = (type: string) => z.object({ type: z.literal(type), id: z.string() });

/** The relationships of a resource that has none (the spec shows `{}`). */
export const NoRelationships = z.object({}).describe('Always empty: this resource has no relationships.');

/** An absolute URL; query brackets percent-encoded as the JSON:API schema requires. */
const AbsoluteUrl = z.url();

/** Top-level links of a paginated list. */
export const PaginationLinks = component(
  'PaginationLinks',
  'Absolute URLs of this page and its neighbours; `prev`/`next` are null at the ends. Query brackets are percent-encoded (`page%5Blimit%5D`).',
  z.object({ self: AbsoluteUrl, first: AbsoluteUrl, prev: AbsoluteUrl.nullable(), next: AbsoluteUrl.nullable(), last: AbsoluteUrl }),
);

/** Top-level links of a single document. */
export const SelfLink = component('SelfLink', 'The absolute URL of this document, with its query.', z.object({ self: AbsoluteUrl }));

/**
 * A resource's own links: its canonical URL. Only resources that a GET serves on their own have
 * one (docs/guide.md, "Resource links"); the others carry no `links`.
 */
export const ResourceLinks = component(
  'ResourceLinks',
  "The resource's canonical URL, absolute: a GET there answers this resource as primary data (with the same credentials). Resources that no GET serves on their own carry no `links`.",
  z.object({ self: AbsoluteUrl }),
);

/** The page a list answer holds. */
export const PageMeta = component(
  'PageMeta',
  'The page this answer holds (`page[limit]`, `page[offset]` after defaults).',
  z.object({ limit: z.number().int().min(1), offset: z.number().int().min(0) }),
);

/**
 * The attributes (or relationships) of a resource whose routes take `fields[<type>]`, as the
 * document states them: every member listed, none required, since a sparse fieldset keeps only
 * the members it names (`type` and `id` always stay). The renderer of the resource is typed by the
 * complete object, so it still renders every member; only the documented answer admits fewer.
 */
export function sparse<S extends z.ZodRawShape>(type: string, members: z.ZodObject<S>) {
  return members
    .partial()
    .describe(`All of them unless the request names a sparse fieldset: \`fields[${type}]=a,b\` keeps only those members, so none is required.`);
}

/** The members a sparse fieldset may name: the keys of an attributes (or relationships) object. */
export const fieldsOf = <S extends z.ZodRawShape>(members: z.ZodObject<S>): string[] => Object.keys(members.shape);

/** A count that cannot be negative. */
export const Count = z.number().int().min(0);

/** ISO 8601 UTC timestamp. */
export const Timestamp = z.iso.datetime().describe('ISO 8601 UTC timestamp.');

/** One JSON:API error object. */
export const ErrorObject = component(
  'ErrorObject',
  'One error. `code` is stable and meant for programs; `detail` is for people.',
  z.object({
    status: z
      .string()
      .regex(/^[45]\d\d$/)
      .describe('The HTTP status, as a string.'),
    code: z.string().describe('Stable machine-readable code, e.g. `invalid_field`, `chest_not_owned`.'),
    title: z.string().describe('The status text, e.g. `Unprocessable Entity`.'),
    detail: z.string().optional().describe('What went wrong, for people.'),
    source: z
      .object({
        pointer: z.string().optional().describe('JSON pointer into the request body, e.g. `/data/attributes/email`.'),
        parameter: z.string().optional().describe('The query or path parameter, e.g. `page[limit]` or `id`.'),
        header: z.string().optional().describe('The request header, e.g. `Idempotency-Key`.'),
      })
      .optional(),
    meta: z.record(z.string(), z.unknown()).optional(),
  }),
);

/** The error document every failure answers with, on every route (the credit endpoint's too); error-responses.ts refers to it by name. */
component(
  'ErrorDocument',
  'A JSON:API error document: one error object per problem (a body failing several rules gets several).',
  z.object({ errors: z.array(ErrorObject).min(1) }),
);

/** What `ErrorObject` describes, as the gateway renders it. */
export type ErrorObject = z.output<typeof ErrorObject>;
