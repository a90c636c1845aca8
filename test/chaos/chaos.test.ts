import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privatePostgresUnavailable } from '@ccs/shared/testing';
import { runChaos, selectScenarios, type ChaosRun } from '../../scripts/chaos/suite.js';
import { natsServerUnavailable } from '../../scripts/chaos/support/infra.js';

// The short chaos suite, as `CHAOS_SHORT=1 npm run chaos` runs it (scripts/chaos/): the stack's
// services as processes on a private Postgres cluster and a private nats-server (the machine's
// own are never restarted), then every scenario marked short: same-chest races, credit and
// purchase races, a registration burst, kill -9 of each service mid-burst, trades under kill -9 of
// collections, wallet and chests in turn, a NATS restart and a Postgres restart. Each must hold: nothing lost or duplicated in the database's ground truth, no
// 5xx but those its fault explains, and recovery under 5 s where there is a fault.
// It runs alone, as its own step (npm run test:chaos; .ci/run after npm test), not in npm test.
// Each scenario is bounded by progress (scripts/chaos/support/progress.ts): it fails as stalled
// when nothing happens for 90 s, never because the machine is slow.

const unavailable = privatePostgresUnavailable() ?? natsServerUnavailable();
const scenarios = selectScenarios({ short: true });

describe.skipIf(unavailable !== undefined)(`chaos, short suite${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let run: ChaosRun | undefined;
  let failure: unknown;

  beforeAll(async () => {
    const lines: string[] = [];
    try {
      run = await runChaos({ short: true, log: (line) => lines.push(line) });
    } catch (err) {
      failure = err;
      console.error(`[chaos] ${lines.join('\n[chaos] ')}`);
    }
    // vitest needs a number: the stall bound ends a hung run long before this one.
  }, 3_600_000);

  afterAll(() => {
    if (run) console.log(run.summary);
  });

  it('runs to the end', () => {
    expect(failure).toBeUndefined();
    expect(run?.results.map((r) => r.name)).toEqual(scenarios.map((s) => s.name));
  });

  it.each(scenarios.map((s) => s.name))('%s holds', (name) => {
    const r = run?.results.find((x) => x.name === name);
    expect(r, `not run${failure ? `: ${String(failure)}` : ''}`).toBeDefined();
    const report = r!.report;
    expect({ scenario: name, why: r!.why }, run?.summary).toEqual({ scenario: name, why: [] });
    expect(report).toBeDefined();
    expect(report!.lost).toBe(0);
    expect(report!.duplicated).toBe(0);
    expect(report!.unexpected5xx).toBe(0);
    if (report!.recoveryS !== undefined) expect(report!.recoveryS).not.toBeNull();
    if (typeof report!.recoveryS === 'number') expect(report!.recoveryS).toBeLessThan(5);
  });
});
