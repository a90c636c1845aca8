import { randomUUID } from 'node:crypto';
import { WalletCreditGrant, type AppContent, type Pool, type WebhookEventType } from '@ccs/shared';
import { creditGrantFactory, loadedApp, startServiceTier, webhookInterestStandIn, type ServiceTier } from '@ccs/shared/testing';
import { WalletConfigSchema, type WalletConfig } from '../../src/config.js';
import { walletService } from '../../src/service.js';

/** The wallet's service tier: the wallet alone over its own database and NATS prefix. */
export type WalletTier = ServiceTier<WalletConfig>;

/**
 * Starts the wallet alone, with egress (which it asks whether an app's webhooks take
 * currency.credited) answered by a contract-bound stand-in: every app's webhooks take
 * `webhookEvents` (default none).
 */
export function startWalletTier(env: Record<string, string> = {}, webhookEvents: WebhookEventType[] = []): Promise<WalletTier> {
  return startServiceTier(walletService, (e) => WalletConfigSchema.parse(e), { responders: [webhookInterestStandIn(webhookEvents)], env });
}

/** The wallet's own database pool (for ledger assertions). */
export const walletPool = (tier: WalletTier): Pool => tier.service.deps.pool;

/** Loads content (default: the project's default file) into an app the test names itself, applied. */
export async function loadContent(tier: WalletTier, appId: string, version: number, content?: AppContent): Promise<void> {
  await loadedApp(tier, { appId, version, content });
}

/** Grants credits as the registration saga does (applied, unless `wait: false`); answers the message id. */
export async function grantCredits(
  tier: WalletTier,
  appId: string,
  playerId: string,
  credits: { currency: string; amount: string }[],
  opts: { id?: string; wait?: boolean; reason?: 'initial_currency' | 'welcome_bonus' | 'admin' } = {},
): Promise<string> {
  const payload = creditGrantFactory(appId, { playerId, credits, reason: opts.reason ?? 'admin' });
  const id = opts.id ?? randomUUID();
  if (opts.wait === false) return (await tier.publish(WalletCreditGrant, payload, { id })).id;
  return tier.publishApplied(WalletCreditGrant, payload, { id });
}

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
