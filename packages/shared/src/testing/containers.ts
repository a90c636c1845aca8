import type { InfraUrls } from './infra.js';

/**
 * Starts Postgres, NATS (JetStream) and Redis in containers for machines where they do not run
 * locally. Needs a Docker engine; the containers stop when the test process exits.
 */
export async function startContainers(): Promise<InfraUrls> {
  const { GenericContainer, Wait } = await import('testcontainers');
  try {
    const [postgres, nats, redis] = await Promise.all([
      new GenericContainer('postgres:16-alpine')
        .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
        .withExposedPorts(5432)
        .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
        .start(),
      new GenericContainer('nats:2.10-alpine').withCommand(['-js']).withExposedPorts(4222).start(),
      new GenericContainer('redis:7-alpine').withExposedPorts(6379).start(),
    ]);
    return {
      databaseUrl: `postgres://postgres@${postgres.getHost()}:${postgres.getMappedPort(5432)}/postgres`,
      natsUrl: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
      redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
    };
  } catch (err) {
    throw new Error(
      `Postgres, NATS or Redis is not reachable and containers could not be started (${String(err)}). ` +
        'Start them locally or set DATABASE_URL, NATS_URL and REDIS_URL.',
      { cause: err },
    );
  }
}
