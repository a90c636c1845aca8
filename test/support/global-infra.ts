/**
 * vitest's global setup: resolves the tests' Postgres, NATS and Redis once for the whole run by
 * `TEST_INFRA` (auto, local or containers; packages/shared/src/testing/infra.ts), hands the URLs
 * to every worker through the environment, and stops the containers it started when the run ends.
 */
import { RESOLVED_MARKER, resolveTestInfra, testInfraMode } from '../../packages/shared/src/testing/infra.js';

export default async function setup(): Promise<() => Promise<void>> {
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
