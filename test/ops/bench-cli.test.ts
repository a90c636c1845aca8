import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const bench = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', '--conditions=development', 'bench/run.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    // A guard against a hang only: on two loaded cores the import alone can take seconds.
    timeout: 120_000,
  });

describe('npm run bench, from the command line', () => {
  it('prints its settings for --help and exits 0, without starting anything', () => {
    const r = bench('--help');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('BENCH_ONLY=');
    expect(r.stdout).toContain('BENCH_CONNECTIONS=');
    expect(r.stdout).not.toContain('[bench]');
  });

  it('refuses an unknown argument and a bad setting with one line, exit 2', () => {
    const unknown = bench('--fast');
    expect([unknown.status, unknown.stderr.trim()]).toEqual([
      2,
      '[bench] unknown argument "--fast" (settings are environment variables: npm run bench -- --help); see docs/performance.md',
    ]);
    const bad = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=development', 'bench/run.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
      // A guard against a hang only: on two loaded cores the import alone can take seconds.
    timeout: 120_000,
      env: { ...process.env, BENCH_DURATION: 'soon' },
    });
    expect([bad.status, bad.stderr.trim()]).toEqual([2, '[bench] BENCH_DURATION must be a number ≥ 0, not "soon"; see docs/performance.md']);
  });
});
