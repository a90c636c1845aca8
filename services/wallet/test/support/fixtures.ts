import { randomUUID } from 'node:crypto';
import { headers as natsHeaders } from 'nats';
import { expect } from 'vitest';
import {
  AppContentLoaded,
  encodeJson,
  prefixed,
  readContentFile,
  watchApplied,
  WalletCreditGrant,
  type AppContent,
  type EventContract,
  type Pool,
} from '@ccs/shared';
import type { z } from 'zod';
import { type TestStack } from '../../../../test/support/stack.js';
import { registerThroughGateway } from '../../../../test/support/register.js';

/** The wallet's own database pool in a running stack (for ledger assertions). */
export function walletPool(stack: TestStack): Pool {
  const svc = stack.services.wallet;
  if (!svc) throw new Error('wallet service is not running');
  return svc.deps.pool;
}

/**
 * Publishes a durable message as another service's outbox relay would (Nats-Msg-Id = id) and,
 * unless told not to, waits until the wallet applied it.
 */
export async function publishEvent<P extends z.ZodType>(
  stack: TestStack,
  event: EventContract<P>,
  id: string,
  payload: z.infer<P>,
  opts: { wait?: boolean; appId?: string } = {},
): Promise<void> {
  const watch = watchApplied(stack.nc, stack.env.NATS_PREFIX!, [id]);
  const h = natsHeaders();
  h.set('ccs-request-id', randomUUID());
  if (opts.appId) h.set('ccs-app-id', opts.appId);
  await stack.nc.jetstream().publish(prefixed(stack.env.NATS_PREFIX!, event.subject), encodeJson(event.payload.parse(payload)), {
    msgID: id,
    headers: h,
  });
  const seen = await watch.done(opts.wait === false ? 0 : 10_000);
  if (opts.wait !== false) expect(seen.has(id), `message ${id} applied`).toBe(true);
}

/** Loads content (default: the project's default file) into an app the test names itself. */
export async function loadContent(stack: TestStack, appId: string, version: number, content: AppContent = readContentFile()): Promise<void> {
  await publishEvent(stack, AppContentLoaded, randomUUID(), { appId, version, content });
}

/** Grants credits as the registration saga does; returns the message id. */
export async function grantCredits(
  stack: TestStack,
  appId: string,
  playerId: string,
  credits: { currency: string; amount: string }[],
  opts: { id?: string; wait?: boolean; reason?: 'initial_currency' | 'welcome_bonus' | 'admin' } = {},
): Promise<string> {
  const id = opts.id ?? randomUUID();
  await publishEvent(stack, WalletCreditGrant, id, { appId, playerId, reason: opts.reason ?? 'admin', credits }, { wait: opts.wait });
  return id;
}

/** A registered player of the stack's demo app (or of `apiKey`'s app): id and access token. */
export const registerPlayer = (stack: TestStack, apiKey = stack.apiKey): Promise<{ id: string; token: string }> =>
  registerThroughGateway(stack, apiKey);

/** The sum of a player's ledger deltas and the stored balance of one currency. */
export async function ledgerTotals(pool: Pool, appId: string, playerId: string, currencyId: string) {
  const r = await pool.query<{ sum: string | null; rows: number; balance: string | null }>(
    `SELECT (SELECT sum(delta)::text FROM ledger WHERE app_id = $1 AND player_id = $2 AND currency_id = $3) AS sum,
            (SELECT count(*)::int FROM ledger WHERE app_id = $1 AND player_id = $2 AND currency_id = $3) AS rows,
            (SELECT amount::text FROM balances WHERE app_id = $1 AND player_id = $2 AND currency_id = $3) AS balance`,
    [appId, playerId, currencyId],
  );
  return r.rows[0]!;
}
