import type { ChestTypeView, InventoryChestView, OpeningView } from '@ccs/shared';
import { convertedMetaOf } from './conversions-render.js';
import type { Purchasable } from './purchasable.js';
import { selfLinks } from './resource-links.js';
import type { CatalogChest, ChestOpeningResult, InventoryChest } from '../../resources/chests.js';

/** Fields a client may select for a chest (`fields[chest]`). */
export const CHEST_FIELDS = ['id', 'name', 'description', 'images'] as const;

/**
 * A catalog chest: presentation, no relationships, its price per currency code in meta, and for a
 * caller with a token where the compliance gate lets them spend (`purchasable`, `requires_key.allowed`,
 * `unlock.skip_allowed`); `base` is the links' absolute base.
 */
export const catalogChest = (c: ChestTypeView, base: string, purchasable?: Purchasable): CatalogChest => ({
  type: 'chest',
  id: c.id,
  attributes: { name: c.name, description: c.description, images: c.images },
  relationships: {},
  links: selfLinks.chest(base, c.id),
  meta: {
    price: c.price,
    ...(c.requiresKey
      ? { requires_key: { ...c.requiresKey, ...(purchasable ? { allowed: purchasable.allowed(c.requiresKey.currency) } : {}) } }
      : {}),
    ...(c.unlock
      ? {
          unlock: {
            seconds: c.unlock.seconds,
            ...(c.unlock.skip ? { skip: { currency: c.unlock.skip.currency, per_minute: c.unlock.skip.perMinute } } : {}),
            ...(purchasable ? { skip_allowed: c.unlock.skip !== undefined && purchasable.allowed(c.unlock.skip.currency) } : {}),
          },
        }
      : {}),
    ...(purchasable ? { purchasable: purchasable(c.price) } : {}),
    ...(c.oddsChange ? { odds_change: { effective_at: c.oddsChange.effectiveAt, rules_version: c.oddsChange.rulesVersion } } : {}),
  },
});

/**
 * An inventory chest: its own id, its type's presentation, where it came from in meta. No self
 * link: no GET serves one owned chest (its id is the one `/chests/{id}/open` and `/unlock` take).
 */
export const inventoryChest = (c: InventoryChestView): InventoryChest => ({
  type: 'chest',
  id: c.id,
  attributes: { name: c.name, description: c.description, images: c.images },
  relationships: {},
  meta: {
    source: c.source,
    chest_type_id: c.chestTypeId,
    acquired_at: c.acquiredAt,
    ...(c.lock ? { lock: { state: c.lock.state, unlocks_at: c.lock.unlocksAt } } : {}),
  },
});

/**
 * The collectibles and statistics of an opening, as the spec's chest-opening result shows them;
 * a collectible converted as a duplicate has `meta.converted`.
 */
export function openingData(o: OpeningView): ChestOpeningResult['data'] {
  const breakdown: Record<string, number> = {};
  for (const it of o.items) breakdown[it.rarity] = (breakdown[it.rarity] ?? 0) + 1;
  return {
    chest_id: o.chestId,
    opened_at: o.openedAt,
    collectibles: o.items.map((it) => ({
      type: 'collectible' as const,
      id: it.collectibleId,
      attributes: { name: it.name, description: it.description, collection_id: it.collectionId, images: it.images, rarity: it.rarity },
      ...convertedMetaOf(it),
    })),
    statistics: { total_items: o.items.length, rarity_breakdown: breakdown },
  };
}
