import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { z } from 'zod';
import { OpeningGranted, watchApplied, type CallContext, type Logger } from '@ccs/shared';
import { loadedApp, openingGrantFactory, startServiceTier, type ServiceTier } from '@ccs/shared/testing';
import { CollectionsConfigSchema, type CollectionsConfig } from '../../src/config.js';
import { OPENINGS_CONSUMER } from '../../src/consumers/opening-granted.js';
import { collectionsService } from '../../src/service.js';

/** The collections service alone over its own database and NATS prefix. */
export type CollectionsTier = ServiceTier<CollectionsConfig>;

/** Starts collections alone (it asks no other service) and loads the default content into a fresh app; answers both. */
export async function startCollectionsTier(env: Record<string, string> = {}, logger?: Logger): Promise<{ tier: CollectionsTier; appId: string }> {
  const tier = await startServiceTier(collectionsService, (e) => CollectionsConfigSchema.parse(e), { env, logger });
  return { tier, appId: await loadedApp(tier) };
}

/** The payload of an OpeningGranted message. */
export type Grant = z.infer<typeof OpeningGranted.payload>;

/** An OpeningGranted payload as the chests service would publish it (a fresh opening id, 10 experience per item). */
export function openingGrant(
  appId: string,
  playerId: string,
  items: { collectibleId: string; collectionId: string; rarity?: string }[],
  openedAt = new Date().toISOString(),
): Grant {
  return openingGrantFactory(appId, playerId, {
    openedAt,
    experience: items.length * 10,
    items: items.map((it, slot) => ({ slot, collectibleId: it.collectibleId, collectionId: it.collectionId, rarity: it.rarity ?? 'common' })),
  });
}

/** Publishes grants as the chests relay does (message id = opening id) and waits until collections applied each. */
export async function grantAndWait(tier: CollectionsTier, ...grants: Grant[]): Promise<void> {
  const watch = watchApplied(
    tier.nc,
    tier.config.NATS_PREFIX,
    grants.map((g) => g.openingId),
    OPENINGS_CONSUMER,
  );
  for (const g of grants) await tier.publish(OpeningGranted, g, { id: g.openingId });
  const seen = await watch.done(15_000);
  if (seen.size !== grants.length) throw new Error(`${grants.length - seen.size} of ${grants.length} grants were not applied`);
}

/** The call context of a player of the app (or of no player). */
export const asPlayer = (appId: string, playerId?: string): CallContext => ({ requestId: randomUUID(), appId, playerId });

/** A direct connection to the collections schema, for counting rows the contracts do not show. */
export async function collectionsDb(tier: CollectionsTier): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: tier.config.DATABASE_URL, options: '-c search_path=collections' });
  await client.connect();
  return client;
}
