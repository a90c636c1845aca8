import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The official JSON:API 1.0 response schema: ../shared beside the repo, or a vendored copy. */
function loadSchema(): object {
  const candidates = [path.resolve(here, '../../../shared/jsonapi/schema-1.0.json'), path.resolve(here, 'schema-1.0.json')];
  for (const c of candidates) {
    try {
      return JSON.parse(readFileSync(c, 'utf8'));
    } catch {
      /* try the next */
    }
  }
  throw new Error('JSON:API schema not found');
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const validate = ajv.compile(loadSchema());

/** Asserts that a response body is a valid JSON:API document (data or errors). */
export function expectJsonApi(body: unknown): void {
  const ok = validate(body);
  expect(ok ? [] : validate.errors, JSON.stringify(body).slice(0, 500)).toEqual([]);
}

/** Asserts a JSON:API error response: status, content type, schema, and the first error's code. */
export function expectError(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code?: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toContain('application/vnd.api+json');
  const body = JSON.parse(res.body);
  expectJsonApi(body);
  expect(body.errors[0].status).toBe(String(status));
  if (code) expect(body.errors.map((e: { code: string }) => e.code)).toContain(code);
  return body.errors as { status: string; code: string; title: string; detail?: string; source?: { pointer?: string; parameter?: string } }[];
}
