import { describe, expect, it } from 'vitest';
import { filterToSql, FilterNodeSchema, matchesFilter, type FilterNode } from '../src/jsonapi/filter.js';

const COLUMNS = { id: 'c.id::text', name: 'c.name', description: 'c.description' };

/** Compiles a filter and returns the SQL and its parameters. */
function compile(node: FilterNode): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  return { sql: filterToSql(node, COLUMNS, params), params };
}

describe('filterToSql', () => {
  it('compiles equality to a parameter', () => {
    expect(compile({ field: 'name', op: 'eq', value: 'Gold' })).toEqual({ sql: 'c.name = $1', params: ['Gold'] });
  });

  it('compiles a list to ANY of one array parameter', () => {
    expect(compile({ field: 'id', op: 'in', value: ['a', 'b'] })).toEqual({ sql: 'c.id::text = ANY($1::text[])', params: [['a', 'b']] });
    expect(compile({ field: 'id', op: 'ne', value: ['a', 'b'] })).toEqual({ sql: 'NOT (c.id::text = ANY($1::text[]))', params: [['a', 'b']] });
    expect(compile({ field: 'name', op: 'ne', value: 'Gold' })).toEqual({ sql: 'c.name <> $1', params: ['Gold'] });
  });

  it('compiles contains and starts_with to ILIKE with LIKE wildcards escaped', () => {
    expect(compile({ field: 'name', op: 'contains', value: '50%_off\\' })).toEqual({ sql: '(c.name ILIKE $1)', params: ['%50\\%\\_off\\\\%'] });
    expect(compile({ field: 'name', op: 'starts_with', value: 'Go' })).toEqual({ sql: '(c.name ILIKE $1)', params: ['Go%'] });
  });

  it('numbers parameters in order through nested and / or / not', () => {
    const node: FilterNode = {
      or: [
        { field: 'name', op: 'eq', value: 'Gold' },
        { and: [{ field: 'name', op: 'contains', value: 'ilver' }, { not: { field: 'description', op: 'eq', value: 'x' } }] },
      ],
    };
    expect(compile(node)).toEqual({
      sql: '(c.name = $1 OR ((c.name ILIKE $2) AND (NOT c.description = $3)))',
      params: ['Gold', '%ilver%', 'x'],
    });
  });

  it('continues numbering after parameters the caller already holds', () => {
    const params: unknown[] = ['app-id'];
    expect(filterToSql({ field: 'name', op: 'eq', value: 'Gold' }, COLUMNS, params)).toBe('c.name = $2');
    expect(params).toEqual(['app-id', 'Gold']);
  });

  it('never puts a value into the SQL text: the text is the same whatever the value', () => {
    const hostile = ["x'; DROP TABLE chests; --", '$1', ') OR (1=1', "' OR ''='"];
    for (const op of ['eq', 'ne', 'contains', 'starts_with', 'in'] as const) {
      const benign = compile({ field: 'name', op, value: 'plain' });
      for (const value of hostile) {
        const { sql, params } = compile({ field: 'name', op, value });
        expect(sql).toBe(benign.sql);
        expect(sql).not.toContain("'");
        expect(params).toHaveLength(1);
        expect(String(params[0])).toContain(value.replace(/[\\%_]/g, (c) => '\\' + c));
      }
    }
  });

  it('gives TRUE and FALSE for empty and / or', () => {
    expect(compile({ and: [] }).sql).toBe('TRUE');
    expect(compile({ or: [] }).sql).toBe('FALSE');
  });

  it('refuses a field without a column instead of guessing one', () => {
    expect(() => compile({ field: 'password', op: 'eq', value: 'x' })).toThrow(/unfilterable field/);
  });
});

describe('matchesFilter', () => {
  const gold = { id: 'a1', name: 'Gold Chest', description: 'Shiny and rare' };
  const silver = { id: 'b2', name: 'Silver Chest', description: 'Common' };

  it('compares equality exactly, and a list as any of', () => {
    expect(matchesFilter({ field: 'name', op: 'eq', value: 'Gold Chest' }, gold)).toBe(true);
    expect(matchesFilter({ field: 'name', op: 'eq', value: 'gold chest' }, gold)).toBe(false);
    expect(matchesFilter({ field: 'id', op: 'in', value: ['x', 'a1'] }, gold)).toBe(true);
    expect(matchesFilter({ field: 'id', op: 'ne', value: ['x', 'a1'] }, gold)).toBe(false);
  });

  it('matches contains and starts_with without regard to case, like ILIKE', () => {
    expect(matchesFilter({ field: 'description', op: 'contains', value: 'RARE' }, gold)).toBe(true);
    expect(matchesFilter({ field: 'name', op: 'starts_with', value: 'silver' }, silver)).toBe(true);
    expect(matchesFilter({ field: 'name', op: 'starts_with', value: 'Chest' }, silver)).toBe(false);
  });

  it('does not treat LIKE wildcards as wildcards', () => {
    expect(matchesFilter({ field: 'name', op: 'contains', value: '%' }, gold)).toBe(false);
    expect(matchesFilter({ field: 'name', op: 'starts_with', value: '_old' }, gold)).toBe(false);
  });

  it('evaluates and / or / not', () => {
    const node: FilterNode = { or: [{ field: 'id', op: 'eq', value: 'zz' }, { not: { field: 'description', op: 'contains', value: 'common' } }] };
    expect(matchesFilter(node, gold)).toBe(true);
    expect(matchesFilter(node, silver)).toBe(false);
    expect(matchesFilter({ and: [] }, gold)).toBe(true);
    expect(matchesFilter({ or: [] }, gold)).toBe(false);
  });

  it('treats a missing field as an empty string', () => {
    expect(matchesFilter({ field: 'missing', op: 'eq', value: '' }, gold)).toBe(true);
    expect(matchesFilter({ field: 'missing', op: 'contains', value: 'x' }, gold)).toBe(false);
  });
});

describe('FilterNodeSchema', () => {
  it('accepts a parsed tree as it crosses NATS and refuses unknown operators', () => {
    const tree: FilterNode = { and: [{ field: 'name', op: 'contains', value: 'G' }, { not: { field: 'id', op: 'in', value: ['a'] } }] };
    expect(FilterNodeSchema.parse(JSON.parse(JSON.stringify(tree)))).toEqual(tree);
    expect(FilterNodeSchema.safeParse({ field: 'name', op: 'like', value: 'G%' }).success).toBe(false);
  });
});
