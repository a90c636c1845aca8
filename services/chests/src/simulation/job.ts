import type { BannerRules, ChestRules } from '@ccs/shared';
import type { DropCollectible, DropRarity } from '@ccs/shared/domain';
import type { ContentSnapshot } from '../repositories/content-repo.js';

/** A chest's rules and what they draw on, as a worker builds its drop table from them. */
interface RulesInput {
  rules: ChestRules;
  rarities: DropRarity[];
  collectibles: DropCollectible[];
}

/** A chest's rules with its content version's rarities and collectibles, as a simulation job carries them. */
export const rulesInput = (rules: ChestRules, content: Pick<ContentSnapshot, 'rarities' | 'collectibles'>): RulesInput => ({
  rules,
  rarities: content.rarities.map((x) => ({ id: x.id, drop_rate: x.drop_rate, rank: x.rank })),
  collectibles: content.collectibles.map((c) => ({ id: c.id, collectionId: c.collection_id, rarity: c.rarity })),
});

/** What a simulation worker is given (structured-cloned into the thread): a chest's rules and the run's size. */
export interface SimulationJob extends RulesInput {
  kind?: 'chest';
  opens: number;
  /** Hex: the run draws from fairRandom(seed, 'simulate', i) and is reproducible; else from the CSPRNG. */
  seed?: string;
}

/** A banner's simulation (simulateBanner) on its chest's rules, seeded: fairRandom(seed, 'banner-stats', i). */
export interface BannerSimulationJob extends RulesInput {
  kind: 'banner';
  banner: BannerRules;
  size: { players: number; pullsPerPlayer: number; chasePlayers: number };
  spark?: { cost: number };
  seed: string;
}
