import { defineConfig } from 'vitest/config';

/**
 * The files that boot services in-process (startStack, startServiceTier) run without per-file
 * module isolation: each worker imports the services once and reuses them for every such file,
 * which halves their import time. They share no module state that matters: every file has its
 * own database, NATS prefix and Redis prefix, sets no globals and restores any process listener
 * or fake timer it installs. Everything else keeps vitest's default isolation: test/observability
 * among them, since OpenTelemetry's tracer provider is process-wide (logs.test.ts finds lines
 * without a trace id after another file's stack ran in the same process), and test/resilience,
 * test/ops, test/chaos, test/console and the packages' and tools' own tests.
 */
const SHARED_MODULES = [
  'test/e2e/**/*.test.ts',
  'test/duplicates/**/*.test.ts',
  'test/webhooks/**/*.test.ts',
  'test/security/**/*.test.ts',
  'test/messaging/**/*.test.ts',
  'services/*/test/**/*.test.ts',
];

export default defineConfig({
  resolve: { conditions: ['development'] },
  ssr: { resolve: { conditions: ['development'] } },
  test: {
    // Postgres, NATS and Redis for the whole run, by TEST_INFRA (auto | local | containers).
    globalSetup: ['test/support/global-infra.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 3,
    reporters: process.env.CI ? ['default'] : ['default'],
    projects: [
      { extends: true, test: { name: 'services', include: SHARED_MODULES, isolate: false } },
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ['packages/*/test/**/*.test.ts', 'tools/*/test/**/*.test.ts', 'test/**/*.test.ts'],
          // The production topology (test/cluster: three NATS servers, PgBouncer, twelve service
          // processes) and the chaos suite (test/chaos: the services as processes on a private
          // Postgres and nats-server, killed and restarted) run alone, each as its own step
          // (npm run test:cluster, npm run test:chaos; .ci/run after npm test): they take minutes,
          // and beside the suite's workers on two cores their fault timings do not hold.
          // test/containers checks the container tier itself: only under TEST_INFRA=containers (npm run test:containers).
          exclude: [
            '**/node_modules/**',
            ...SHARED_MODULES,
            ...(process.env.CLUSTER_TESTS === '1' ? [] : ['test/cluster/**']),
            ...(process.env.CHAOS_TESTS === '1' ? [] : ['test/chaos/**']),
            ...(process.env.TEST_INFRA === 'containers' ? [] : ['test/containers/**']),
          ],
        },
      },
    ],
  },
});
