import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { expect } from 'vitest';
import { encodeJson, OpeningGranted, ResolveApiKey, watchApplied } from '@ccs/shared';
import { openingGrant, type Grant } from '../../../services/collections/test/support/collections-tier.js';
import { eventually, jsonApiHeaders, type TestStack } from '../../support/stack.js';
import { OPENINGS_CONSUMER } from '../../../services/collections/src/consumers/opening-granted.js';
import { registerThroughGateway } from '../../support/register.js';

/** A registered player of one app: id and access token. */
export interface TestPlayer {
  id: string;
  token: string;
}

/** The app id behind an API key (asked of the players service, as the gateway does). */
export async function appIdOf(stack: TestStack, apiKey = stack.apiKey): Promise<string> {
  const r = await stack.bus.request(ResolveApiKey, { apiKey }, { requestId: randomUUID() });
  return r.appId;
}

/** Registers a player through the gateway, exactly as a client does. */
export const registerPlayer = (stack: TestStack, apiKey = stack.apiKey): Promise<TestPlayer> => registerThroughGateway(stack, apiKey);

/** Waits until the app's content reached the collections service (it arrives over JetStream). */
export async function waitForContent(stack: TestStack, apiKey = stack.apiKey, collections = 5): Promise<void> {
  await eventually(async () => {
    const res = await stack.inject({ method: 'GET', url: '/api/v1/collections', headers: jsonApiHeaders(apiKey) });
    expect(res.json().meta?.total_count).toBe(collections);
  }, 20_000);
}

export { openingGrant, type Grant } from '../../../services/collections/test/support/collections-tier.js';

/** Publishes a grant to JetStream with Nats-Msg-Id = opening id, as the chests relay does. */
export async function publishGrant(stack: TestStack, grant: Grant) {
  return stack.nc.jetstream().publish(`${stack.env.NATS_PREFIX}.${OpeningGranted.subject}`, encodeJson(grant), { msgID: grant.openingId });
}

/** Publishes grants and waits until the collections consumer has applied every one of them. */
export async function grantAndWait(stack: TestStack, ...grants: Grant[]): Promise<void> {
  const watch = watchApplied(
    stack.nc,
    stack.env.NATS_PREFIX!,
    grants.map((g) => g.openingId),
    OPENINGS_CONSUMER,
  );
  for (const g of grants) await publishGrant(stack, g);
  const seen = await watch.done(15_000);
  expect(seen.size).toBe(grants.length);
}

/** A direct connection to the collections schema, for counting rows the API cannot show. */
export async function collectionsDb(stack: TestStack): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: stack.env.DATABASE_URL, options: '-c search_path=collections' });
  await client.connect();
  return client;
}

/** GET through the gateway as the demo app, optionally as a player. */
export function get(stack: TestStack, url: string, token?: string, apiKey = stack.apiKey) {
  return stack.inject({ method: 'GET', url, headers: jsonApiHeaders(apiKey, token) });
}

/**
 * A registered player who owns, from two openings of ancient-relics, the clay amulet twice (first
 * on 2024-03-01T10:00Z, again a day later) and the bronze coin once.
 */
export async function seedRelicsOwner(stack: TestStack): Promise<TestPlayer> {
  const player = await registerPlayer(stack);
  const appId = await appIdOf(stack);
  const relic = (collectibleId: string) => ({ collectibleId, collectionId: 'ancient-relics' });
  await grantAndWait(
    stack,
    openingGrant(appId, player.id, [relic('ancient-clay-amulet'), relic('ancient-bronze-coin')], '2024-03-01T10:00:00.000Z'),
    openingGrant(appId, player.id, [relic('ancient-clay-amulet')], '2024-03-02T10:00:00.000Z'),
  );
  return player;
}
