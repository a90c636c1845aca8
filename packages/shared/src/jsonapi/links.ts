import qs from 'qs';

/** A page's links: itself, the first and last, and its neighbours (null at either end). */
export type PaginationLinks = { self: string; first: string; prev: string | null; next: string | null; last: string };

/**
 * Builds top-level pagination links as absolute URLs. Query brackets are percent-encoded
 * (`page%5Blimit%5D`), as the JSON:API schema's URI format requires.
 */
export function paginationLinks(
  baseUrl: string,
  path: string,
  query: Record<string, unknown>,
  page: { limit: number; offset: number },
  total: number,
): PaginationLinks {
  let at: (offset: number) => string;
  if (Object.prototype.hasOwnProperty.call(query, 'page')) {
    // A `page` member of its own would keep its place in the query: the general (slow) way.
    at = (offset) =>
      `${baseUrl}${path}?${qs.stringify({ ...query, page: { limit: String(page.limit), offset: String(offset) } }, { encodeValuesOnly: false })}`;
  } else {
    // The same text, the other members encoded once: qs joins each top-level member's encoding
    // with `&`, and `page` comes last.
    const rest = qs.stringify(query, { encodeValuesOnly: false });
    const head = `${baseUrl}${path}?${rest ? `${rest}&` : ''}page%5Blimit%5D=${String(page.limit)}&page%5Boffset%5D=`;
    at = (offset) => head + String(offset);
  }
  const lastOffset = total === 0 ? 0 : Math.floor((total - 1) / page.limit) * page.limit;
  return {
    self: at(page.offset),
    first: at(0),
    prev: page.offset > 0 ? at(Math.max(0, page.offset - page.limit)) : null,
    next: page.offset + page.limit < total ? at(page.offset + page.limit) : null,
    last: at(lastOffset),
  };
}

/** An absolute self link with the request's query, brackets encoded. */
export function selfLink(baseUrl: string, path: string, query: Record<string, unknown>): string {
  const q = qs.stringify(query);
  return q ? `${baseUrl}${path}?${q}` : `${baseUrl}${path}`;
}
