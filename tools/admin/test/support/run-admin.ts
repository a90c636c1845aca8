import type { TestStack } from '../../../../test/support/stack.js';
import { runAdmin } from '../../src/cli.js';

/** One admin command line run in this process against the test stack: its exit code, stdout and stderr. */
export async function runAdminIn(stack: TestStack, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, {
    bus: stack.bus,
    io: { out: (l) => out.push(l), progress: (l) => err.push(l) },
    maxPayload: stack.nc.info!.max_payload,
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
