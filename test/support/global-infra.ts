/**
 * vitest's global setup: resolves the tests' Postgres, NATS and Redis once for the whole run by
 * `TEST_INFRA` (auto, local or containers; packages/shared/src/testing/infra.ts), hands the URLs
 * to every worker through the environment, and stops the containers it started when the run ends.
 * vitest calls a global setup once for the root config and once for each project
 * (vitest.config.ts has two); only the first call resolves, the others share its result.
 */
import { RESOLVED_MARKER, resolveTestInfra, testInfraMode } from '../../packages/shared/src/testing/infra.js';

const ONCE = Symbol.for('ccs.test-infra.global-setup');
type Registry = { [ONCE]?: Promise<void> };

async function resolveOnce(): Promise<() => Promise<void>> {
  const mode = testInfraMode();
  const infra = await resolveTestInfra(mode);
  process.env.DATABASE_URL = infra.urls.databaseUrl;
  process.env.NATS_URL = infra.urls.natsUrl;
  process.env.REDIS_URL = infra.urls.redisUrl;
  process.env[RESOLVED_MARKER] = infra.source;
  if (infra.source === 'containers') console.log(`[tests] TEST_INFRA=${mode}: Postgres, NATS and Redis run in containers for this run`);
  return async () => {
    if (infra.stop) {
      console.log('[tests] stopping the test containers');
      await infra.stop();
    }
  };
}

export default async function setup(): Promise<() => Promise<void>> {
  const registry = globalThis as Registry;
  if (registry[ONCE]) {
    await registry[ONCE];
    return async () => undefined;
  }
  const teardown = resolveOnce();
  registry[ONCE] = teardown.then(() => undefined);
  return teardown;
}
