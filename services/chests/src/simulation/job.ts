import type { ChestRules } from '@ccs/shared';
import type { DropCollectible, DropRarity } from '@ccs/shared/domain';

/** What a simulation worker is given (structured-cloned into the thread): a chest's rules and the run's size. */
export interface SimulationJob {
  rules: ChestRules;
  rarities: DropRarity[];
  collectibles: DropCollectible[];
  opens: number;
  /** Hex: the run draws from fairRandom(seed, 'simulate', i) and is reproducible; else from the CSPRNG. */
  seed?: string;
}
