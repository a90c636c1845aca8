import qs from 'qs';
import { describe, expect, it } from 'vitest';
import { AppError } from '../src/errors/app-error.js';
import { MAX_FILTER_DEPTH, parseJsonApiQuery, type QuerySpec } from '../src/jsonapi/query.js';

// The gateway's own query-string parser options, so the inputs look exactly like real requests.
const parse = (query: string) => qs.parse(query, { depth: 8, arrayLimit: 20, parameterLimit: 200, plainObjects: true }) as Record<string, unknown>;

const CATALOG: QuerySpec = {
  include: [],
  fields: { chest: ['id', 'name', 'description', 'images'] },
  sort: ['id', 'name', 'description'],
  filter: { fields: ['id', 'name', 'description'], nested: true },
  page: { defaultLimit: 20, maxLimit: 100 },
};

/** Runs the parser on a query string and returns the AppError it must throw. */
function rejection(query: string, spec: QuerySpec = CATALOG): AppError {
  try {
    parseJsonApiQuery(parse(query), spec);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error(`expected "${query}" to be rejected`);
}

/** Asserts a bad_request (400) naming the offending parameter (and optionally its code). */
function expectBadParameter(query: string, parameter: string, code?: string, spec: QuerySpec = CATALOG): void {
  const err = rejection(query, spec);
  expect(err.kind).toBe('bad_request');
  expect(err.errors).toHaveLength(1);
  expect(err.errors[0]!.source).toEqual({ parameter });
  if (code) expect(err.code).toBe(code);
}

describe('parseJsonApiQuery: defaults and plain members', () => {
  it('gives the defaults for an empty query', () => {
    expect(parseJsonApiQuery({}, CATALOG)).toEqual({ include: [], fields: {}, sort: [], filter: undefined, page: { limit: 20, offset: 0 } });
  });

  it('rejects an unknown parameter naming it', () => {
    expectBadParameter('color=red', 'color', 'unknown_parameter');
  });

  it('rejects parameters named like Object.prototype members, as any unknown one', () => {
    // (qs drops `__proto__` members; the gateway's query parser records them: see its app.ts.)
    expectBadParameter('constructor[prototype][polluted]=1', 'constructor', 'unknown_parameter');
    expectBadParameter('hasOwnProperty=1', 'hasOwnProperty', 'unknown_parameter');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('accepts the extra parameters an endpoint declares', () => {
    expect(parseJsonApiQuery(parse('lang=en'), { ...CATALOG, extra: ['lang'] }).page).toEqual({ limit: 20, offset: 0 });
  });
});

describe('parseJsonApiQuery: include', () => {
  const spec: QuerySpec = { include: ['collection', 'collectibles'] };

  it('accepts supported paths and removes duplicates', () => {
    expect(parseJsonApiQuery(parse('include=collection,collectibles,collection'), spec).include).toEqual(['collection', 'collectibles']);
  });

  it('rejects an unsupported path, listing what is supported', () => {
    const err = rejection('include=owner', spec);
    expect(err.code).toBe('unsupported_include');
    expect(err.errors[0]!.source).toEqual({ parameter: 'include' });
    expect(err.errors[0]!.detail).toContain('collection, collectibles');
  });

  it('rejects any include where the endpoint has no relationships', () => {
    expectBadParameter('include=chests', 'include', 'unsupported_include');
  });

  it('rejects include given twice', () => {
    expectBadParameter('include=collection&include=collectibles', 'include', 'invalid_parameter', spec);
  });
});

describe('parseJsonApiQuery: fields', () => {
  it('accepts selectable fields per type', () => {
    expect(parseJsonApiQuery(parse('fields[chest]=id,name'), CATALOG).fields).toEqual({ chest: ['id', 'name'] });
  });

  it('rejects an unknown field of a known type', () => {
    expectBadParameter('fields[chest]=id,price', 'fields[chest]', 'unsupported_fields');
  });

  it('rejects a type that has no selectable fields here', () => {
    expectBadParameter('fields[player]=email', 'fields[player]', 'unsupported_fields');
  });

  it('rejects fields without a type', () => {
    expectBadParameter('fields=id', 'fields');
  });
});

describe('parseJsonApiQuery: sort', () => {
  it('reads ascending and "-" descending fields in order', () => {
    expect(parseJsonApiQuery(parse('sort=name,-id'), CATALOG).sort).toEqual([
      { field: 'name', direction: 'asc' },
      { field: 'id', direction: 'desc' },
    ]);
  });

  it('rejects a field that cannot be sorted on', () => {
    expectBadParameter('sort=-price', 'sort', 'unsupported_sort');
  });

  it('rejects sorting where the endpoint cannot be sorted', () => {
    const err = rejection('sort=name', { include: [] });
    expect(err.errors[0]!.detail).toContain('cannot be sorted');
  });

  it('rejects an empty sort field', () => {
    expectBadParameter('sort=name,,id', 'sort', 'unsupported_sort');
  });
});

describe('parseJsonApiQuery: page', () => {
  it('reads limit and offset', () => {
    expect(parseJsonApiQuery(parse('page[limit]=5&page[offset]=10'), CATALOG).page).toEqual({ limit: 5, offset: 10 });
  });

  it('accepts the maximum limit', () => {
    expect(parseJsonApiQuery(parse('page[limit]=100'), CATALOG).page.limit).toBe(100);
  });

  it.each([
    ['page[limit]=0', 'page[limit]'],
    ['page[limit]=101', 'page[limit]'],
    ['page[limit]=-1', 'page[limit]'],
    ['page[limit]=1.5', 'page[limit]'],
    ['page[limit]=ten', 'page[limit]'],
    ['page[offset]=-3', 'page[offset]'],
    ['page[offset]=1000000001', 'page[offset]'],
  ])('rejects %s as out of range', (query, parameter) => {
    expectBadParameter(query, parameter, 'invalid_page');
  });

  it('rejects page members other than limit and offset', () => {
    expectBadParameter('page[size]=10', 'page[size]');
  });

  it('rejects page as a plain value', () => {
    expectBadParameter('page=2', 'page');
  });

  it('rejects page on an endpoint that is not paginated', () => {
    expectBadParameter('page[limit]=5', 'page', 'invalid_parameter', { include: [] });
  });
});

describe('parseJsonApiQuery: filter', () => {
  const filterOf = (query: string, spec: QuerySpec = CATALOG) => parseJsonApiQuery(parse(query), spec).filter;

  it('reads equality, and a comma list as any of', () => {
    expect(filterOf('filter[name]=Gold Chest')).toEqual({ field: 'name', op: 'eq', value: 'Gold Chest' });
    expect(filterOf('filter[id]=a,b')).toEqual({ field: 'id', op: 'eq', value: ['a', 'b'] });
  });

  it('reads every operator', () => {
    expect(filterOf('filter[name][contains]=old')).toEqual({ field: 'name', op: 'contains', value: 'old' });
    expect(filterOf('filter[name][starts_with]=Go')).toEqual({ field: 'name', op: 'starts_with', value: 'Go' });
    expect(filterOf('filter[name][ne]=Gold')).toEqual({ field: 'name', op: 'ne', value: 'Gold' });
    expect(filterOf('filter[id][in]=a,b,c')).toEqual({ field: 'id', op: 'in', value: ['a', 'b', 'c'] });
    expect(filterOf('filter[name][eq]=Gold')).toEqual({ field: 'name', op: 'eq', value: 'Gold' });
  });

  it('keeps commas inside contains and starts_with values', () => {
    expect(filterOf('filter[description][contains]=gold, silver')).toEqual({ field: 'description', op: 'contains', value: 'gold, silver' });
  });

  it('combines several members of one level with and', () => {
    expect(filterOf('filter[name][starts_with]=G&filter[description][contains]=rare')).toEqual({
      and: [
        { field: 'name', op: 'starts_with', value: 'G' },
        { field: 'description', op: 'contains', value: 'rare' },
      ],
    });
  });

  it('combines two operators on one field with and', () => {
    expect(filterOf('filter[name][starts_with]=G&filter[name][ne]=Gold')).toEqual({
      and: [
        { field: 'name', op: 'starts_with', value: 'G' },
        { field: 'name', op: 'ne', value: 'Gold' },
      ],
    });
  });

  it('reads nested and / or / not', () => {
    const q = 'filter[or][0][name]=Gold&filter[or][1][and][0][name][contains]=ilver&filter[or][1][and][1][not][description][contains]=broken';
    expect(filterOf(q)).toEqual({
      or: [
        { field: 'name', op: 'eq', value: 'Gold' },
        {
          and: [{ field: 'name', op: 'contains', value: 'ilver' }, { not: { field: 'description', op: 'contains', value: 'broken' } }],
        },
      ],
    });
  });

  it(`accepts nesting down to depth ${MAX_FILTER_DEPTH} and rejects one level deeper`, () => {
    expect(filterOf('filter[not][not][not][name]=x')).toEqual({ not: { not: { not: { field: 'name', op: 'eq', value: 'x' } } } });
    expectBadParameter('filter[not][not][not][not][name]=x', 'filter[not][not][not][not]', 'invalid_filter');
  });

  it('rejects a logical node with no conditions or too many', () => {
    expectBadParameter('filter[and]=x', 'filter[and]', 'invalid_filter');
    const many = Array.from({ length: 21 }, (_, i) => `filter[or][${i}][name]=n${i}`).join('&');
    expectBadParameter(many, 'filter[or]', 'invalid_filter');
  });

  it('rejects an unknown field, naming where it is', () => {
    expectBadParameter('filter[price]=5', 'filter[price]', 'invalid_filter');
    expectBadParameter('filter[and][0][color]=red', 'filter[and][0][color]', 'invalid_filter');
  });

  it('rejects an unknown operator', () => {
    expectBadParameter('filter[name][like]=G%', 'filter[name][like]', 'invalid_filter');
  });

  it('rejects an operator given a list instead of a string', () => {
    expectBadParameter('filter[name][eq][]=a&filter[name][eq][]=b', 'filter[name][eq]', 'invalid_filter');
  });

  it('rejects a value with the NUL character, which the database cannot compare', () => {
    expectBadParameter('filter[name]=a%00b', 'filter[name]', 'invalid_filter');
    expectBadParameter('filter[or][0][name][contains]=%00', 'filter[or][0][name][contains]', 'invalid_filter');
  });

  it('rejects filter as a plain value', () => {
    expectBadParameter('filter=name', 'filter', 'invalid_filter');
  });

  it('rejects logical nodes and operators where only equality is allowed', () => {
    const flat: QuerySpec = { filter: { fields: ['rarity'] } };
    expect(filterOf('filter[rarity]=rare', flat)).toEqual({ field: 'rarity', op: 'eq', value: 'rare' });
    expectBadParameter('filter[or][0][rarity]=rare', 'filter[or]', 'invalid_filter', flat);
    expectBadParameter('filter[rarity][ne]=rare', 'filter[rarity]', 'invalid_filter', flat);
  });

  it('rejects filter on an endpoint that cannot be filtered', () => {
    expectBadParameter('filter[name]=x', 'filter', 'unsupported_filter', { include: [] });
  });
});
