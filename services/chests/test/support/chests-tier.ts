import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { ChestGrant, InventoryAccess, OpenChest, readContentFile, type AppContent, type CallContext, type ReplyOf, chestTypeId } from '@ccs/shared';
import {
  chestGrantFactory,
  complianceProfileStandIn,
  inventoryAccessStandIn,
  loadedApp,
  openingConversionsStandIn,
  startServiceTier,
  walletStandIn,
  type ComplianceProfile,
  type ServiceTier,
  type StandInWallet,
} from '@ccs/shared/testing';
import { ChestsConfigSchema, type ChestsConfig } from '../../src/config.js';
import { chestsService } from '../../src/service.js';

/** The chests service alone over its own database and NATS prefix. */
export type ChestsTier = ServiceTier<ChestsConfig>;

/** The chests tier and the state its stand-in neighbours answer from. */
export interface ChestsTierRun {
  tier: ChestsTier;
  /** The wallet's balances and debits (chests debits prices, keys and skips, and refunds them). */
  wallet: StandInWallet;
  /** Players' compliance profiles by player id (default: nothing declared). */
  profiles: Map<string, ComplianceProfile>;
  /** Players' answer on another owner's inventory, by owner id (default: 404 player_not_found). */
  access: Map<string, ReplyOf<typeof InventoryAccess>>;
  /** Collections' duplicate conversions by opening id (default: not applied yet). */
  conversions: Map<string, { slot: number; currency: string; amount: number }[]>;
}

/**
 * Starts chests alone, with what it asks its neighbours answered by contract-bound stand-ins: the
 * wallet (debit, refund), players (compliance profile, inventory access) and collections (opening
 * conversions). Nothing applies its grants, so an opening does not wait for them (GRANT_WAIT_MS 0)
 * unless `env` says otherwise.
 */
export async function startChestsTier(env: Record<string, string> = {}): Promise<ChestsTierRun> {
  const wallet = walletStandIn();
  const profiles = new Map<string, ComplianceProfile>();
  const access: ChestsTierRun['access'] = new Map();
  const conversions: ChestsTierRun['conversions'] = new Map();
  const tier = await startServiceTier(chestsService, (e) => ChestsConfigSchema.parse(e), {
    responders: [...wallet.endpoints, complianceProfileStandIn(profiles), inventoryAccessStandIn(access), openingConversionsStandIn(conversions)],
    env: { GRANT_WAIT_MS: '0', ...env },
  });
  return { tier, wallet, profiles, access, conversions };
}

/** An app of the tier with content (default: the project's default file), applied; its id and catalog ids by slug. */
export async function chestsApp(tier: ChestsTier, overrides: { appId?: string; version?: number; content?: AppContent } = {}) {
  const content = overrides.content ?? readContentFile();
  const appId = await loadedApp(tier, { ...overrides, content });
  const types = Object.fromEntries(content.chests.map((c) => [c.id, chestTypeId(appId, c.id)]));
  return { appId, types, content };
}

/** The call context of a request of the app, as a player when given. */
export const callOf = (appId: string, playerId?: string): CallContext => ({ requestId: randomUUID(), appId, playerId });

/**
 * Grants `n` chests (default one wooden chest to a fresh player, source `special`) through the
 * durable ChestGrant message, as players or collections do, and waits until each is applied.
 * Answers the player and the chest ids.
 */
export async function grantedChests(
  tier: ChestsTier,
  appId: string,
  overrides: { playerId?: string; chestTypeId?: string; n?: number; source?: 'purchased' | 'earned' | 'welcome' | 'special' } = {},
): Promise<{ playerId: string; chests: string[] }> {
  const playerId = overrides.playerId ?? randomUUID();
  const chests = Array.from({ length: overrides.n ?? 1 }, () => randomUUID());
  await Promise.all(
    chests.map((inventoryChestId) =>
      tier.publishApplied(
        ChestGrant,
        chestGrantFactory(appId, {
          playerId,
          inventoryChestId,
          chestTypeId: overrides.chestTypeId ?? 'wooden-chest',
          source: overrides.source ?? 'special',
        }),
        { timeoutMs: 20_000 },
      ),
    ),
  );
  return { playerId, chests };
}

/** Opens a player's chest over chests.v1.open. */
export const openChest = (tier: ChestsTier, appId: string, playerId: string, chestId: string, idempotencyKey?: string) =>
  tier.bus.request(OpenChest, { chestId, ...(idempotencyKey ? { idempotencyKey } : {}) }, callOf(appId, playerId));

/** Runs one query on the tier's database (the chests schema first on the path), for what the subjects do not show. */
export async function chestsSql<T extends pg.QueryResultRow>(tier: ChestsTier, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: tier.config.DATABASE_URL, options: '-c search_path=chests' });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}
