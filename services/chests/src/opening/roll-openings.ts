import { randomUUID } from 'node:crypto';
import {
  fairRandom,
  nextCounter,
  OpeningGranted,
  outboxMessage,
  rollTable,
  tableAtCounter,
  type CallContext,
  type OpeningView,
  type OutboxMessage,
} from '@ccs/shared';
import type { PityCounter } from '../repositories/openings-repo.js';
import type { ActiveSeed } from '../repositories/seeds-repo.js';
import type { ResolvedChestType } from './drop-tables.js';

/** The pity group of a chest type: its rules' group, else the type's own slug. */
export const pityGroupOf = (type: Pick<ResolvedChestType['type'], 'rules' | 'slug'>): string | undefined =>
  type.rules.pity && (type.rules.pity.group ?? type.slug);

/** Openings rolled from one state of the player's pair, and each pity group's counter after them. */
export interface Rolled {
  openings: OpeningView[];
  counters: PityCounter[];
}

/** One chest to roll: its id and its type's drop table as the opening's state resolved it. */
export interface ChestToRoll {
  chestId: string;
  resolved: ResolvedChestType;
}

/**
 * Rolls the chests in order (one for a single open): consecutive nonces from the pair's next one,
 * each from the HMAC-SHA256 stream of (server seed, client seed, nonce) (docs/fairness.md), from
 * the drop table as the pity counter adjusts it (pity.ts), each group's counter carried from one
 * opening to the next.
 */
export function rollOpenings(chests: ChestToRoll[], seed: ActiveSeed, serverSeed: string, counters: Map<string, number>): Rolled {
  const counter = new Map(counters);
  const finals = new Map<string, PityCounter>();
  const openedAt = new Date().toISOString();
  const openings = chests.map(({ chestId, resolved }, i) => {
    const group = pityGroupOf(resolved.type);
    const rule = resolved.table.pity && resolved.type.rules.pity;
    const before = group ? (counter.get(group) ?? 0) : 0;
    const nonce = seed.nextNonce + i;
    const items = rollTable(tableAtCounter(resolved.table, before), fairRandom(serverSeed, seed.clientSeed, nonce)).map((it) => {
      const c = resolved.collectibles.get(it.collectibleId)!;
      return { ...it, name: c.name, description: c.description, images: c.images };
    });
    const after = nextCounter(resolved.table, before, items);
    if (group && rule) {
      counter.set(group, after);
      finals.set(group, { group, opensSince: after, rarity: rule.rarity, hard: rule.hard });
    }
    const opening: OpeningView = {
      openingId: randomUUID(),
      chestId,
      chestTypeId: resolved.type.id,
      openedAt,
      items,
      experience: items.reduce((sum, it) => sum + (resolved.experience.get(it.rarity) ?? 0), 0),
      rulesVersion: resolved.type.contentVersion,
      fairness: { serverSeedHash: seed.serverSeedHash, clientSeed: seed.clientSeed, nonce },
      ...(group && rule
        ? { pity: { group, rarity: rule.rarity, opensSinceBefore: before, opensSinceAfter: after, triggered: before >= rule.hard - 1 } }
        : {}),
    };
    return opening;
  });
  return { openings, counters: [...finals.values()] };
}

/** The durable grant of an opening: collections adds the items, players the experience. */
export function grantOf(opening: OpeningView, cmd: { appId: string; playerId: string; notify?: string }, ctx: CallContext): OutboxMessage {
  return outboxMessage(
    OpeningGranted,
    opening.openingId,
    {
      openingId: opening.openingId,
      appId: cmd.appId,
      playerId: cmd.playerId,
      chestTypeId: opening.chestTypeId,
      openedAt: opening.openedAt,
      experience: opening.experience,
      rulesVersion: opening.rulesVersion,
      items: opening.items.map((it) => ({ slot: it.slot, collectibleId: it.collectibleId, collectionId: it.collectionId, rarity: it.rarity })),
    },
    ctx,
    { notify: cmd.notify },
  );
}
