/**
 * The collections service as a process that dies right after a grant batch with duplicate
 * conversions commits, before its credits are published and its grants acked (exit code 87): the
 * crash test/duplicates/crash.test.ts proves the recovery from. Production code has no such branch.
 */
import { loadConfig, runMain } from '@ccs/shared';
import { CollectionsConfigSchema } from '../../src/config.js';
import { collectionsServiceWith } from '../../src/service.js';

await runMain(
  collectionsServiceWith({
    afterGrantCommit: (credits) => {
      process.stderr.write(`fault seam: exiting after a grant batch with ${credits} credit(s) committed, before publishing\n`);
      process.exit(87);
    },
  }),
  () => loadConfig(CollectionsConfigSchema),
);
