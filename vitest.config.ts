import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['development'] },
  ssr: { resolve: { conditions: ['development'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'tools/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // Postgres, NATS and Redis for the whole run, by TEST_INFRA (auto | local | containers).
    globalSetup: ['test/support/global-infra.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 3,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
