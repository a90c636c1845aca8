import type { NatsConnection } from 'nats';
import type { Bus } from '@ccs/shared';
import { runAdmin } from '../../src/cli.js';

/**
 * One admin command line run in this process against a running stack or service tier (anything
 * with its bus and NATS connection): its exit code, stdout and stderr.
 */
export async function runAdminIn(stack: { bus: Bus; nc: NatsConnection }, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, {
    bus: stack.bus,
    io: { out: (l) => out.push(l), progress: (l) => err.push(l) },
    maxPayload: stack.nc.info!.max_payload,
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
