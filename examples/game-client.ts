/**
 * A small game client, using only the typed client (@ccs/client): registers a player, buys a
 * chest, opens it, and prints the collection.
 *
 *   npm start                       # in another terminal: prints the demo app's API key
 *   CHESTS_API_KEY=<key> npx tsx --conditions=development examples/game-client.ts
 *
 * CHESTS_URL is the gateway (http://localhost:3000 by default).
 */
import { ApiError, createChestClient, newIdempotencyKey } from '@ccs/client';

const baseUrl = process.env.CHESTS_URL ?? 'http://localhost:3000';
const apiKey = process.env.CHESTS_API_KEY;
if (!apiKey) {
  console.error("Set CHESTS_API_KEY to the app's publishable key (npm start prints the demo app's).");
  process.exit(2);
}

const client = createChestClient({ baseUrl, apiKey });

async function play() {
  const email = `player-${newIdempotencyKey().slice(0, 8)}@example.com`;
  const me = await client.register(email, 'Str0ng!pass');
  console.log(`registered ${email} (player ${me.data.id})`);

  const chest = (await client.catalog()).data.find((c) => c.meta.price.coins !== undefined && !c.meta.requires_key && !c.meta.unlock)!;
  const bought = await client.purchase(chest.id, 'coins');
  console.log(`bought a ${chest.attributes.name} for ${bought.meta.price_paid.coins} coins; ${bought.meta.balance.coins} coins left`);

  const opened = await client.open(bought.data[0]!.id);
  console.log(`opened it: ${opened.data.collectibles.map((c) => `${c.attributes.name} (${c.attributes.rarity})`).join(', ')}`);

  const collection = await client.collection();
  console.log(`collection: ${collection.data.length} different collectibles`);
  for (const item of collection.data) console.log(`  ${item.attributes.name} ×${item.meta.owned_count}`);
}

play().catch((err: unknown) => {
  console.error(err instanceof ApiError ? `the API refused: ${err.message}` : `failed: ${String(err)}`);
  process.exit(1);
});
