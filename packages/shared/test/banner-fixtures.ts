/**
 * Chests and banners the banner tests share: a one-item gacha with soft and hard pity (the worked
 * example of docs/content.md, "Banners"), and a many-slot chest with guarantees, bonuses and
 * pity, so the pull is exercised on every path of the roll.
 */
import { buildDropTable, type BannerRules, type ChestRules, type DropCollectible, type DropRarity } from '../src/index.js';

export const RARITIES: DropRarity[] = [
  { id: 'common', drop_rate: 0.943, rank: 1 },
  { id: 'rare', drop_rate: 0.051, rank: 2 },
  { id: 'legendary', drop_rate: 0.006, rank: 3 },
];

/** Per rarity: 6 commons, 5 rares, 5 legendaries (legendary-0 and legendary-1 featured). */
export const COLLECTIBLES: DropCollectible[] = RARITIES.flatMap((r) =>
  Array.from({ length: r.id === 'common' ? 6 : 5 }, (_, i) => ({ id: `${r.id}-${i}`, collectionId: 'set', rarity: r.id })),
);

/** One item per pull, legendary 0.6 %: soft pity from 73 (+6 % a pull), the guarantee at 90. */
export const GACHA: ChestRules = {
  items: { fixed: 1 },
  pools: [{ collection: 'set' }],
  guarantees: [],
  bonus: [],
  pity: { rarity: 'legendary', hard: 90, soft_start: 73, soft_step: 0.06 },
};

/** 50/50 on two featured legendaries, the guarantee, a rare floor for ten-pulls. */
export const BANNER: BannerRules = {
  featured: { rarity: 'legendary', collectibles: ['legendary-1', 'legendary-0'], share: 0.5 },
  guarantee: true,
  ten_pull_floor: 'rare',
};

/** 2–4 items, a guaranteed rare-or-better slot, a bonus, soft pity on legendary. */
export const MIXED: ChestRules = {
  items: { min: 2, max: 4 },
  rarity_weights: { common: 70, rare: 22, legendary: 8 },
  pools: [{ collection: 'set' }],
  guarantees: [{ min_rarity: 'rare', count: 1 }],
  bonus: [{ chance: 0.3, count: 2, min_rarity: 'rare' }],
  pity: { rarity: 'legendary', hard: 8, soft_start: 4, soft_step: 0.1 },
};

export const gachaTable = () => buildDropTable(GACHA, RARITIES, COLLECTIBLES);
export const mixedTable = () => buildDropTable(MIXED, RARITIES, COLLECTIBLES);

/** The chest's disclosure as verify-opening.mjs reads it: rules and rule_inputs. */
export const ruleInputs = {
  rarities: RARITIES.map((r) => ({ id: r.id, drop_rate: r.drop_rate, rank: r.rank })),
  collectibles: COLLECTIBLES.map((c) => ({ id: c.id, collection_id: c.collectionId, rarity: c.rarity })),
};
