import type { InfraUrls } from './infra.js';

/** Containers started for a test run, and how to stop them. */
export interface StartedContainers extends InfraUrls {
  stop(): Promise<void>;
}

/**
 * Starts Postgres (@testcontainers/postgresql), NATS with JetStream and Redis in containers, for
 * machines where they do not run locally or when `TEST_INFRA=containers` asks for them. Needs a
 * Docker engine. `stop` removes them; vitest's global setup calls it when the run ends (and
 * testcontainers' reaper removes them if the process dies first). TEST_POSTGRES_IMAGE, TEST_NATS_IMAGE
 * and TEST_REDIS_IMAGE name other images (npm run test:containers: the local ones that
 * scripts/docker/build-images.sh builds from Debian packages).
 */
export async function startContainers(): Promise<StartedContainers> {
  const [{ GenericContainer }, { PostgreSqlContainer }] = await Promise.all([import('testcontainers'), import('@testcontainers/postgresql')]);
  try {
    const [postgres, nats, redis] = await Promise.all([
      new PostgreSqlContainer(process.env.TEST_POSTGRES_IMAGE || 'postgres:16-alpine')
        .withUsername('postgres')
        .withPassword('postgres')
        .withDatabase('postgres')
        .start(),
      new GenericContainer(process.env.TEST_NATS_IMAGE || 'nats:2.10-alpine').withCommand(['-js']).withExposedPorts(4222).start(),
      new GenericContainer(process.env.TEST_REDIS_IMAGE || 'redis:7-alpine').withExposedPorts(6379).start(),
    ]);
    return {
      databaseUrl: postgres.getConnectionUri(),
      natsUrl: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
      redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
      async stop() {
        await Promise.all([postgres.stop(), nats.stop(), redis.stop()]);
      },
    };
  } catch (err) {
    throw new Error(
      `Containers for Postgres, NATS and Redis could not be started (${String(err)}). ` +
        'Start a Docker engine, or run the services locally and set TEST_INFRA=local (with DATABASE_URL, NATS_URL and REDIS_URL where they are not on the standard ports).',
      { cause: err },
    );
  }
}
