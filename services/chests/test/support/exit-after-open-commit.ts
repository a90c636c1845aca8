/**
 * The chests service as a process that dies right after an opening commits, before its grant is
 * published (exit code 86): the crash the outbox relay must recover from. Spawned by
 * resilience.test.ts in place of src/main.ts; production code has no such branch.
 */
import { loadConfig, runMain } from '@ccs/shared';
import { ChestsConfigSchema } from '../../src/config.js';
import { chestsServiceWith } from '../../src/service.js';

export const EXIT_AFTER_OPEN_COMMIT = 86;

await runMain(
  chestsServiceWith({
    afterOpenCommit: (openingId) => {
      process.stderr.write(`fault seam: exiting after opening ${openingId} committed, before publishing\n`);
      process.exit(EXIT_AFTER_OPEN_COMMIT);
    },
  }),
  () => loadConfig(ChestsConfigSchema),
);
