import { AppError } from '../errors/app-error.js';
import { FILTER_OPS, type FilterNode, type FilterOp } from './filter.js';

/** What an endpoint accepts in its query string; anything else is a 400. */
export interface QuerySpec {
  include?: readonly string[];
  /** Selectable field names per resource type. */
  fields?: Readonly<Record<string, readonly string[]>>;
  sort?: readonly string[];
  /** Filterable fields; `nested` allows and/or/not and operators. */
  filter?: { fields: readonly string[]; nested?: boolean };
  page?: { defaultLimit: number; maxLimit: number };
  /** Further plain parameters the endpoint reads itself. */
  extra?: readonly string[];
}

export interface SortField {
  field: string;
  direction: 'asc' | 'desc';
}

export interface ParsedQuery {
  include: string[];
  fields: Record<string, string[]>;
  sort: SortField[];
  filter?: FilterNode;
  page: { limit: number; offset: number };
}

export const MAX_FILTER_DEPTH = 4;
const bad = (parameter: string, detail: string, code = 'invalid_parameter') => AppError.badRequest(code, detail, { parameter });

/** What parsing derives from a spec, built once per spec (specs are module-level constants, never changed). */
interface CompiledSpec {
  /** Query members the endpoint knows. */
  known: ReadonlySet<string>;
  /** Its include paths. */
  include: ReadonlySet<string>;
}

const compiledSpecs = new WeakMap<QuerySpec, CompiledSpec>();

function compile(spec: QuerySpec): CompiledSpec {
  let c = compiledSpecs.get(spec);
  if (!c) {
    c = { known: new Set(['include', 'fields', 'sort', 'filter', 'page', ...(spec.extra ?? [])]), include: new Set(spec.include ?? []) };
    compiledSpecs.set(spec, c);
  }
  return c;
}

/**
 * Parses the JSON:API query members of a request (already split by `qs` into nested objects):
 * include, fields[type], sort, filter (equality, operators, and/or/not to a bounded depth) and
 * page[limit]/page[offset]. Every unsupported value is a 400 naming the parameter.
 */
export function parseJsonApiQuery(raw: Record<string, unknown>, spec: QuerySpec): ParsedQuery {
  const compiled = compile(spec);
  for (const key of Object.keys(raw)) {
    if (!compiled.known.has(key)) throw bad(key, `Unknown query parameter "${key}".`, 'unknown_parameter');
  }
  return {
    include: parseInclude(raw.include, compiled.include),
    fields: parseFields(raw.fields, spec),
    sort: parseSort(raw.sort, spec),
    filter: raw.filter === undefined ? undefined : parseFilter(raw.filter, spec),
    page: parsePage(raw.page, spec),
  };
}

function asString(v: unknown, parameter: string): string {
  if (typeof v !== 'string') throw bad(parameter, `"${parameter}" must be given once, as a string.`);
  return v;
}

function parseInclude(v: unknown, allowed: ReadonlySet<string>): string[] {
  if (v === undefined) return [];
  const paths = asString(v, 'include')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const p of paths) {
    if (!allowed.has(p)) {
      const hint = allowed.size ? ` Supported: ${[...allowed].join(', ')}.` : ' This endpoint supports no relationships.';
      throw bad('include', `Unsupported include path "${p}".${hint}`, 'unsupported_include');
    }
  }
  return [...new Set(paths)];
}

function parseFields(v: unknown, spec: QuerySpec): Record<string, string[]> {
  if (v === undefined) return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad('fields', 'Use fields[<type>]=<comma-separated names>.');
  const out: Record<string, string[]> = {};
  for (const [type, list] of Object.entries(v)) {
    const parameter = `fields[${type}]`;
    const allowed = spec.fields?.[type];
    if (!allowed) throw bad(parameter, `No fields can be selected for type "${type}" here.`, 'unsupported_fields');
    const names = asString(list, parameter)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const n of names) {
      if (!allowed.includes(n))
        throw bad(parameter, `Unknown field "${n}" for type "${type}". Selectable: ${allowed.join(', ')}.`, 'unsupported_fields');
    }
    out[type] = names;
  }
  return out;
}

function parseSort(v: unknown, spec: QuerySpec): SortField[] {
  if (v === undefined) return [];
  const allowed = spec.sort ?? [];
  const parts = asString(v, 'sort')
    .split(',')
    .map((s) => s.trim());
  return parts.map((p) => {
    const direction = p.startsWith('-') ? 'desc' : 'asc';
    const field = p.replace(/^-/, '');
    if (!allowed.includes(field)) {
      const hint = allowed.length ? ` Allowed: ${allowed.join(', ')}.` : ' This endpoint cannot be sorted.';
      throw bad('sort', `Unsupported sort field "${field || p}".${hint}`, 'unsupported_sort');
    }
    return { field, direction };
  });
}

const DIGITS = /^\d{1,9}$/;

function parsePage(v: unknown, spec: QuerySpec): { limit: number; offset: number } {
  const defaults = spec.page ?? { defaultLimit: 20, maxLimit: 100 };
  if (v === undefined) return { limit: defaults.defaultLimit, offset: 0 };
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad('page', 'Use page[limit] and page[offset].');
  if (!spec.page) throw bad('page', 'This endpoint is not paginated.');
  const page = v as Record<string, unknown>;
  for (const k of Object.keys(page)) {
    if (k !== 'limit' && k !== 'offset') throw bad(`page[${k}]`, `Unsupported page member "${k}". Use page[limit] and page[offset].`);
  }
  const int = (name: 'limit' | 'offset', min: number, max: number, dflt: number) => {
    if (page[name] === undefined) return dflt;
    const s = asString(page[name], `page[${name}]`);
    if (!DIGITS.test(s) || Number(s) < min || Number(s) > max) {
      throw bad(`page[${name}]`, `page[${name}] must be an integer from ${min} to ${max}.`, 'invalid_page');
    }
    return Number(s);
  };
  return { limit: int('limit', 1, defaults.maxLimit, defaults.defaultLimit), offset: int('offset', 0, 1_000_000_000, 0) };
}

function parseFilter(v: unknown, spec: QuerySpec): FilterNode {
  if (!spec.filter) throw bad('filter', 'This endpoint cannot be filtered.', 'unsupported_filter');
  return filterObject(v, spec.filter, 'filter', 1);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads `filter[...]` at one level: several members mean all of them must hold. */
function filterObject(v: unknown, f: NonNullable<QuerySpec['filter']>, at: string, depth: number): FilterNode {
  if (depth > MAX_FILTER_DEPTH) throw bad(at, `Filters nest at most ${MAX_FILTER_DEPTH} levels deep.`, 'invalid_filter');
  if (!isRecord(v) || Object.keys(v).length === 0) throw bad(at, `${at} must name a field, or and/or/not.`, 'invalid_filter');
  const nodes = Object.entries(v).map(([key, value]): FilterNode => {
    const here = `${at}[${key}]`;
    if (key === 'and' || key === 'or') {
      if (!f.nested) throw bad(here, 'Logical filters are not supported here.', 'invalid_filter');
      const items = Array.isArray(value) ? value : isRecord(value) ? Object.values(value) : [];
      if (items.length === 0 || items.length > 20) throw bad(here, `${here} needs 1 to 20 conditions: ${here}[0][field]=...`, 'invalid_filter');
      const children = items.map((item, i) => filterObject(item, f, `${here}[${i}]`, depth + 1));
      return key === 'and' ? { and: children } : { or: children };
    }
    if (key === 'not') {
      if (!f.nested) throw bad(here, 'Logical filters are not supported here.', 'invalid_filter');
      return { not: filterObject(value, f, here, depth + 1) };
    }
    if (!f.fields.includes(key)) {
      throw bad(here, `Cannot filter on "${key}". Filterable: ${f.fields.join(', ')}.`, 'invalid_filter');
    }
    return comparison(key, value, f, here);
  });
  return nodes.length === 1 ? nodes[0]! : { and: nodes };
}

/** Filter values reach the database as text, which cannot hold the NUL character. */
function noNul(value: string, at: string): string {
  if (value.includes('\u0000')) throw bad(at, `${at} must not contain the NUL character (%00).`, 'invalid_filter');
  return value;
}

function comparison(field: string, value: unknown, f: NonNullable<QuerySpec['filter']>, at: string): FilterNode {
  if (typeof value === 'string') {
    noNul(value, at);
    const list = value.split(',');
    return { field, op: 'eq', value: list.length === 1 ? value : list };
  }
  if (!isRecord(value) || !f.nested) throw bad(at, `${at} must be a value, or an operator object like ${at}[eq]=...`, 'invalid_filter');
  const ops = Object.entries(value).map(([op, operand]): FilterNode => {
    const here = `${at}[${op}]`;
    if (!(FILTER_OPS as readonly string[]).includes(op)) {
      throw bad(here, `Unknown filter operator "${op}". Use one of: ${FILTER_OPS.join(', ')}.`, 'invalid_filter');
    }
    if (typeof operand !== 'string') throw bad(here, `${here} must be a single string value.`, 'invalid_filter');
    noNul(operand, here);
    const list = operand.split(',');
    return { field, op: op as FilterOp, value: op === 'in' || op === 'eq' || op === 'ne' ? (list.length === 1 ? operand : list) : operand };
  });
  if (ops.length === 0) throw bad(at, `${at} needs an operator.`, 'invalid_filter');
  return ops.length === 1 ? ops[0]! : { and: ops };
}
