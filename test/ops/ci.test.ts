import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const script = readFileSync(`${ROOT}.ci/run`, 'utf8');

/** Runs one of the script's probe functions (postgres_up, redis_up, nats_up, nats_js) in bash. */
function probe(name: string): boolean {
  const functions = script.slice(script.indexOf('postgres_up()'), script.indexOf('# Waits up to'));
  return spawnSync('bash', ['-c', `${functions}\n${name}`], { timeout: 10_000 }).status === 0;
}

// The probes look at the standard local ports, as on CI; elsewhere (containers) they are skipped.
const localInfra = [
  [process.env.DATABASE_URL, '127.0.0.1:5432'],
  [process.env.NATS_URL, '127.0.0.1:4222'],
  [process.env.REDIS_URL, '127.0.0.1:6379'],
].every(([url, local]) => url === undefined || url.includes(local!));

describe('.ci/run', () => {
  it('is valid bash that stops at the first failure', () => {
    execFileSync('bash', ['-n', `${ROOT}.ci/run`]);
    expect(script).toMatch(/^#!\/usr\/bin\/env bash\n/);
    expect(script).toContain('set -euo pipefail');
  });

  it('waits for a piece of infrastructure with progress, then fails naming it and the limit', () => {
    const helpers = script.slice(
      script.indexOf('started=$SECONDS'),
      script.indexOf('fail() {') + script.slice(script.indexOf('fail() {')).indexOf('\n') + 1,
    );
    const waits = script.slice(script.indexOf('# Waits up to'), script.indexOf('step "node'));
    const run = (check: string) =>
      spawnSync('bash', ['-c', `set -euo pipefail\n${helpers}\n${waits}\nwait_for ${check} 2 Widget`], { encoding: 'utf8', timeout: 10_000 });
    const down = run('false');
    expect(down.status).toBe(1);
    expect(down.stdout).toMatch(/waiting for Widget \(0 s\)/);
    expect(down.stderr).toContain('FAILED: Widget did not come up within 2 s');
    const up = run('true');
    expect(up.status).toBe(0);
    expect(up.stdout).toMatch(/Widget is up/);
  });

  it("installs Debian's patroni, etcd-server and haproxy before the cluster tier, saying what to do when it cannot", () => {
    const install = script.slice(script.indexOf('patroni_path='), script.indexOf('\nfi\n', script.indexOf('patroni_path=')));
    expect(install).toContain('apt-get install -y -q patroni etcd-server haproxy');
    expect(install).toMatch(/fail "could not install patroni, etcd-server and haproxy: .*PATRONI_BIN/);
    expect(script.indexOf('patroni_path=')).toBeLessThan(script.indexOf('npm run test:cluster'));
  });

  it('checks for dead code (knip) in the lint lane, before the build', () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as {
      scripts: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.scripts.deadcode).toMatch(/^knip\b/);
    expect(pkg.devDependencies.knip).toBeDefined();
    const lane = script.slice(script.indexOf('lint_and_build() {'), script.indexOf('\n}\n', script.indexOf('lint_and_build() {')));
    expect(lane).toContain('npm run deadcode --silent || fail');
    expect(lane.indexOf('npm run deadcode')).toBeGreaterThan(lane.indexOf('npm run lint'));
    expect(lane.indexOf('npm run deadcode')).toBeLessThan(lane.indexOf('npm run build'));
    expect(readFileSync(`${ROOT}knip.jsonc`, 'utf8')).toContain('"workspaces"');
  });

  it.skipIf(!localInfra)('recognises the running Postgres, Redis and NATS with JetStream', () => {
    expect(probe('postgres_up')).toBe(true);
    expect(probe('redis_up')).toBe(true);
    expect(probe('nats_up')).toBe(true);
    expect(probe('nats_js')).toBe(true);
  });
});
