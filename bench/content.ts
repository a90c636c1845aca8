/**
 * The bench app's content: the default content (packages/shared/content/default.json) with what
 * the scenarios need and the demo app does not allow:
 *
 * - inventory_capacity 2,000 (demo: 100), so one player can hold 1,000 unopened chests and the
 *   purchase and opening players hold their share of the run;
 * - access tokens valid 2 hours (demo: 15 minutes), longer than any bench run;
 * - two extra chest types, both cheap, drawing from every collection:
 *   "Bench Ten" (exactly 10 items: one opening makes the 10-item collection) and
 *   "Bench Hoard" (exactly 100 items: 50, the most `items` allows, plus five certain bonuses of 10,
 *   so 100 openings make the 10,000-item collection).
 * The catalog therefore lists 7 chest types instead of the demo's 5.
 * - trading on (bench/trade-scenario.ts): between any two players, any rarity for any other, one
 *   coin for the offer and one for the accept, no stamina, 10,000 offers a day.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './stack-process.js';

export const INVENTORY_CAPACITY = 2000;
export const TEN_CHEST = { id: 'bench-ten', name: 'Bench Ten', items: 10 };
export const HOARD_CHEST = { id: 'bench-hoard', name: 'Bench Hoard', items: 100 };
/** Price of the bench's two extra chest types, in coins. */
export const BENCH_CHEST_PRICE = 100;

interface Content {
  players: Record<string, unknown>;
  collections: { id: string }[];
  chests: Record<string, unknown>[];
  trading?: Record<string, unknown>;
}

export function benchContent(): Content {
  const content = JSON.parse(readFileSync(path.join(ROOT, 'packages/shared/content/default.json'), 'utf8')) as Content;
  content.players.inventory_capacity = INVENTORY_CAPACITY;
  content.players.access_token_ttl_seconds = 7200;
  const pools = content.collections.map((c) => ({ collection: c.id }));
  content.chests.push(
    {
      id: TEN_CHEST.id,
      name: TEN_CHEST.name,
      description: 'Bench: exactly ten items from every collection.',
      price: { coins: BENCH_CHEST_PRICE },
      rules: { items: { fixed: 10 }, pools },
    },
    {
      id: HOARD_CHEST.id,
      name: HOARD_CHEST.name,
      description: 'Bench: exactly one hundred items (fifty, and five certain bonuses of ten).',
      price: { coins: BENCH_CHEST_PRICE },
      rules: {
        items: { fixed: 50 },
        pools,
        bonus: Array.from({ length: 5 }, () => ({ chance: 1, count: 10, min_rarity: 'common' })),
      },
    },
  );
  const coin = { tradable: true, token_cost: 1 };
  content.trading = {
    enabled: true,
    friends_only: false,
    same_rarity: false,
    rarities: { common: coin, rare: coin, legendary: coin },
    token_currency: 'coins',
    daily_offer_cap: 10_000,
  };
  return content;
}

/** Writes the bench content to `file` (for the admin command's --content). */
export function writeBenchContent(file: string): void {
  writeFileSync(file, JSON.stringify(benchContent(), null, 2) + '\n');
}
