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

  it('installs with npm ci, then typechecks, builds and runs the whole suite, in that order', () => {
    const steps = ['\nnpm ci', '\nnpx tsc --noEmit -p .', '\nnpm run build', '\nnpm test'].map((s) => script.indexOf(s));
    expect(steps.every((i) => i > 0)).toBe(true);
    expect([...steps].sort((a, b) => a - b)).toEqual(steps);
  });

  it('starts each missing piece with the machine\'s own commands', () => {
    expect(script).toContain('pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start');
    expect(script).toContain(
      'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
    );
    expect(script).toContain(
      'start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log',
    );
    for (const v of ['DATABASE_URL', 'NATS_URL', 'REDIS_URL']) expect(script).toMatch(new RegExp(`export ${v}=`));
  });

  it.skipIf(!localInfra)('recognises the running Postgres, Redis and NATS with JetStream', () => {
    expect(probe('postgres_up')).toBe(true);
    expect(probe('redis_up')).toBe(true);
    expect(probe('nats_up')).toBe(true);
    expect(probe('nats_js')).toBe(true);
  });
});
