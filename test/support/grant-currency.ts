import { randomUUID } from 'node:crypto';
import { AdminCreditPlayer } from '@ccs/shared';
import type { TestStack } from './stack.js';

/**
 * Gives a player currency as the studio does (the admin API's grant, wallet.v1.admin_credit): any
 * currency, paid ones included, which the player credit endpoint refuses (403 paid_currency).
 * `appId` is the player's app (the access token's `app` claim). Returns the balance after it.
 */
export async function grantCurrency(
  stack: TestStack,
  appId: string,
  playerId: string,
  currency: string,
  amount: string,
  reference = `test-${randomUUID()}`,
): Promise<string> {
  const r = await stack.bus.request(AdminCreditPlayer, { appId, playerId, currency, amount, reference }, { requestId: randomUUID(), appId });
  return r.balance;
}

/** The app id of an access token (its `app` claim). */
export const appOfToken = (token: string): string => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).app as string;
