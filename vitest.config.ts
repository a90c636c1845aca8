import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.js';

/**
 * Every file runs without per-file module isolation (the `services` project): each worker imports
 * the services, the gateway and the libraries once and reuses them for every file it runs, which
 * saves most of a file's import time. They share no module state that matters: every file has its
 * own database, NATS prefix and Redis prefix, sets no globals and restores any process listener
 * or fake timer it installs. The `isolated` project keeps vitest's default isolation for the files
 * that need it: test/observability, since OpenTelemetry's tracer provider is process-wide
 * (logs.test.ts finds lines without a trace id after another file's stack ran in the same
 * process), and test/ops/nats-permissions.test.ts, which sets environment variables.
 */
const ISOLATED = ['test/observability/**/*.test.ts', 'test/ops/nats-permissions.test.ts'];
const ALL = ['packages/*/test/**/*.test.ts', 'tools/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts'];
/**
 * The production topology (test/cluster: three NATS servers, PgBouncer, twelve service processes)
 * and the chaos suite (test/chaos: the services as processes on a private Postgres and
 * nats-server, killed and restarted) run alone, each as its own step (npm run test:cluster,
 * npm run test:chaos; .ci/run after npm test): they take minutes, and beside the suite's workers
 * on two cores their fault timings do not hold. test/containers checks the container tier itself:
 * only under TEST_INFRA=containers (npm run test:containers).
 */
const ALONE = [
  ...(process.env.CLUSTER_TESTS === '1' ? [] : ['test/cluster/**']),
  ...(process.env.CHAOS_TESTS === '1' ? [] : ['test/chaos/**']),
  ...(process.env.TEST_INFRA === 'containers' ? [] : ['test/containers/**']),
];

export default defineConfig({
  resolve: { conditions: ['development'] },
  ssr: { resolve: { conditions: ['development'] } },
  test: {
    // Postgres, NATS and Redis for the whole run, by TEST_INFRA (auto | local | containers).
    globalSetup: ['test/support/global-infra.ts'],
    // Guards against a hang, never a measure of speed: a test that spawns the services or the CLI
    // takes several times longer on two cores shared with other work, and must not fail for it.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    sequence: { sequencer: LongestFirstSequencer },
    maxWorkers: 3,
    reporters: process.env.CI ? ['default'] : ['default'],
    projects: [
      { extends: true, test: { name: 'services', include: ALL, exclude: ['**/node_modules/**', ...ISOLATED, ...ALONE], isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED, exclude: ['**/node_modules/**', ...ALONE] } },
    ],
  },
});
