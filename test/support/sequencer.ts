import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, longest first. On a fresh clone vitest has no timings of its own
 * and starts files in the order of its globs, which puts test/ops and test/resilience, the
 * slowest, last: the run then waits at its end for a long file started late. Once vitest has
 * timings from an earlier run (node_modules/.vite), they decide instead. The order only decides
 * when a file starts, never whether it passes; a file missing here just starts with the rest.
 */
const LONGEST_FIRST = [
  'test/ops/start.test.ts',
  'test/console/console.test.ts',
  'test/console/support-desk.test.ts',
  'test/resilience/rolling-restart.test.ts',
  'test/security/hostile-defaults.test.ts',
  'test/ops/client-pack.test.ts',
  'test/e2e/players/apps.test.ts',
  'test/security/bad-input.test.ts',
  'services/chests/test/simulations.test.ts',
  'test/e2e/admin/simulation-per-app.test.ts',
  'services/chests/test/drop-odds.test.ts',
  'test/security/hostile-studio.test.ts',
  'test/e2e/players/sessions.test.ts',
  'test/ops/bench-cli.test.ts',
  'test/resilience/consumer-shutdown.test.ts',
  'tools/admin/test/admin-cli.test.ts',
  'test/console/store.test.ts',
  'test/console/banners.test.ts',
  'test/console/odds-log.test.ts',
  'test/e2e/admin/simulate.test.ts',
  'test/resilience/postgres-connection-loss.test.ts',
  'test/ops/compose-admin.test.ts',
  'test/e2e/players/registration.test.ts',
  'services/chests/test/pity-domain.test.ts',
  'services/chests/test/tier/studio-chest-grants.test.ts',
];

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const cache = this.ctx.cache;
    const timed = sorted.some((f) => cache.getFileTestResults(`${f.project.name}:${this.relative(f)}`));
    if (timed) return sorted;

    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.indexOf(this.relative(f));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    // Projects keep vitest's order (one after the other); within one, Array.prototype.sort is
    // stable, so files of equal rank keep vitest's order too.
    const projects = [...new Set(sorted.map((f) => f.project.name))];
    return projects.flatMap((name) => sorted.filter((f) => f.project.name === name).sort((a, b) => rank(a) - rank(b)));
  }

  private relative(f: TestSpecification): string {
    return f.moduleId.slice(this.ctx.config.root.length + 1);
  }
}
