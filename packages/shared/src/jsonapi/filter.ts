import { z } from 'zod';

export const FILTER_OPS = ['eq', 'ne', 'contains', 'starts_with', 'in'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

/** A parsed `filter` query: comparisons combined with and/or/not; crosses NATS as JSON. */
export type FilterNode =
  { and: FilterNode[] } | { or: FilterNode[] } | { not: FilterNode } | { field: string; op: FilterOp; value: string | string[] };

export const FilterNodeSchema: z.ZodType<FilterNode> = z.lazy(() =>
  z.union([
    z.object({ and: z.array(FilterNodeSchema).max(20) }),
    z.object({ or: z.array(FilterNodeSchema).max(20) }),
    z.object({ not: FilterNodeSchema }),
    z.object({ field: z.string(), op: z.enum(FILTER_OPS), value: z.union([z.string(), z.array(z.string()).max(100)]) }),
  ]),
);

/** Whether a filter field holds ids (`id`, `<name>_id`): those compare case-insensitively, as ids do everywhere. */
const isIdField = (field: string): boolean => field === 'id' || field.endsWith('_id');

/** A leaf's values; an id field's in lower case (ids are stored and compared lower-cased). */
function valuesOf(node: { field: string; value: string | string[] }): string[] {
  const values = Array.isArray(node.value) ? node.value : [node.value];
  return isIdField(node.field) ? values.map((v) => v.toLowerCase()) : values;
}

/**
 * Compiles a filter tree into a parameterised SQL condition. `columns` maps each filterable field
 * to its SQL expression (never user text); values only ever travel as parameters.
 */
export function filterToSql(node: FilterNode, columns: Record<string, string>, params: unknown[]): string {
  if ('and' in node) return node.and.length ? `(${node.and.map((n) => filterToSql(n, columns, params)).join(' AND ')})` : 'TRUE';
  if ('or' in node) return node.or.length ? `(${node.or.map((n) => filterToSql(n, columns, params)).join(' OR ')})` : 'FALSE';
  if ('not' in node) return `(NOT ${filterToSql(node.not, columns, params)})`;
  const col = columns[node.field];
  if (!col) throw new Error(`unfilterable field ${node.field}`);
  const values = valuesOf(node);
  const add = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const like = (v: string) => v.replace(/[\\%_]/g, (c) => '\\' + c);
  switch (node.op) {
    case 'eq':
    case 'in':
      return values.length === 1 ? `${col} = ${add(values[0])}` : `${col} = ANY(${add(values)}::text[])`;
    case 'ne':
      return values.length === 1 ? `${col} <> ${add(values[0])}` : `NOT (${col} = ANY(${add(values)}::text[]))`;
    case 'contains':
      return `(${values.map((v) => `${col} ILIKE ${add('%' + like(v) + '%')}`).join(' OR ')})`;
    case 'starts_with':
      return `(${values.map((v) => `${col} ILIKE ${add(like(v) + '%')}`).join(' OR ')})`;
  }
}

/** Evaluates a filter tree against an in-memory record (for small cached lists). */
export function matchesFilter(node: FilterNode, record: Record<string, unknown>): boolean {
  if ('and' in node) return node.and.every((n) => matchesFilter(n, record));
  if ('or' in node) return node.or.some((n) => matchesFilter(n, record));
  if ('not' in node) return !matchesFilter(node.not, record);
  const actual = String(record[node.field] ?? '');
  const values = valuesOf(node);
  const lower = actual.toLowerCase();
  switch (node.op) {
    case 'eq':
    case 'in':
      return values.includes(actual);
    case 'ne':
      return !values.includes(actual);
    case 'contains':
      return values.some((v) => lower.includes(v.toLowerCase()));
    case 'starts_with':
      return values.some((v) => lower.startsWith(v.toLowerCase()));
  }
}
