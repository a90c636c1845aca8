import qs from 'qs';

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
): Record<string, string | null> {
  const at = (offset: number) => {
    const q = qs.stringify({ ...query, page: { limit: String(page.limit), offset: String(offset) } }, { encodeValuesOnly: false });
    return `${baseUrl}${path}?${q}`;
  };
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
