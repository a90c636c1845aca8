import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testInfra } from '@ccs/shared/testing';
import { servedDocument } from '../../scripts/client/generate.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REDOCLY = join(ROOT, 'node_modules/.bin/redocly');

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

/** Runs `redocly lint` (its recommended rules) on a document; the report as its JSON format gives it. */
function lint(file: string): LintReport {
  const run = spawnSync(REDOCLY, ['lint', file, '--format=json'], {
    encoding: 'utf8',
    timeout: 60_000,
    // No telemetry and no update check: the run needs nothing from the network.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  expect(run.error).toBeUndefined();
  const json = run.stdout.slice(run.stdout.indexOf('{'));
  expect(json, `redocly printed no report: ${run.stderr.slice(0, 500)}`).not.toBe('');
  return JSON.parse(json) as LintReport;
}

const problemsOf = (r: LintReport) => r.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);

describe('the OpenAPI document under the redocly linter', () => {
  let dir: string;
  let served: Record<string, unknown> & { info: Record<string, unknown> };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ccs-openapi-lint-'));
    const infra = await testInfra();
    served = (await servedDocument({ ...process.env, NATS_URL: infra.natsUrl, REDIS_URL: infra.redisUrl })) as typeof served;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds the served document valid, with no error and no warning', () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(served, null, 2));
    const report = lint(file);
    expect(problemsOf(report)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 90_000);

  it('reports what it finds (a document without its licence gets the warning)', () => {
    const { license: _license, ...info } = served.info;
    const file = join(dir, 'unlicensed.json');
    writeFileSync(file, JSON.stringify({ ...served, info }));
    const report = lint(file);
    expect(report.problems.map((p) => p.ruleId)).toEqual(['info-license']);
    expect(report.totals.warnings).toBe(1);
  }, 90_000);
});
