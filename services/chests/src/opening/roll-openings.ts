import { randomUUID } from 'node:crypto';
import {
  fairRandom,
  nextCounter,
  pullBanner,
  type BannerRules,
  type BannerStanding,
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

/** A banner pity group's standing after a pull's openings, and the openings rolled in it (each adds a pull and a spark point). */
export interface BannerStandingAfter {
  group: string;
  guaranteedFeatured: boolean;
  pity: number;
  pulls: number;
}

/** Openings rolled from one state of the player's pair, and each pity group's counter after them. */
export interface Rolled {
  openings: OpeningView[];
  counters: PityCounter[];
  /** The banner groups the openings moved (empty without banner chests). */
  banners: BannerStandingAfter[];
}

/** The banner a chest opens as (DESIGN.md §8): its id, its pity group and its rules. */
export interface BannerToRoll {
  id: string;
  group: string;
  rules: BannerRules;
}

/** One chest to roll: its id and its type's drop table as the opening's state resolved it; a banner pull's chest, its banner. */
export interface ChestToRoll {
  chestId: string;
  resolved: ResolvedChestType;
  banner?: BannerToRoll;
}

/** The player's standings the banner chests roll from, per pity group: the flag, the counter and the spark points (absent: none yet). */
export type BannerStandings = Map<string, Pick<BannerStanding, 'guaranteedFeatured' | 'pity' | 'sparkPoints'>>;

/**
 * Rolls the chests in order (one for a single open): consecutive nonces from the pair's next one,
 * each from the HMAC-SHA256 stream of (server seed, client seed, nonce) (docs/fairness.md), from
 * the drop table as the pity counter adjusts it (pity.ts), each group's counter carried from one
 * opening to the next.
 */
export function rollOpenings(
  chests: ChestToRoll[],
  seed: ActiveSeed,
  serverSeed: string,
  counters: Map<string, number>,
  standings: BannerStandings = new Map(),
): Rolled {
  const counter = new Map(counters);
  const finals = new Map<string, PityCounter>();
  const openedAt = new Date().toISOString();
  const banners = new Map<string, BannerStandingAfter & { sparkPoints: number }>();
  const openings: OpeningView[] = [];
  for (let i = 0; i < chests.length; ) {
    const banner = chests[i]!.banner;
    if (!banner) {
      openings.push(rollOne(chests[i]!, i));
      i++;
      continue;
    }
    // A ten-pull is ten banner chests of one banner in a row (a pull's batch): one pull of 10, the floor applying; else one by one.
    let run = 1;
    while (run < 10 && i + run < chests.length && chests[i + run]!.banner?.id === banner.id) run++;
    const count = run === 10 ? 10 : 1;
    openings.push(...rollPull(chests.slice(i, i + count), banner, i));
    i += count;
  }
  return { openings, counters: [...finals.values()], banners: [...banners.values()].map(({ sparkPoints: _points, ...moved }) => moved) };

  /** The openings of one banner pull of 1 or 10 chests (the i-th chest first), the group's standing carried. */
  function rollPull(pulled: ChestToRoll[], banner: BannerToRoll, first: number): OpeningView[] {
    const { resolved } = pulled[0]!;
    const was = standings.get(banner.group);
    const group = banners.get(banner.group) ?? {
      group: banner.group,
      guaranteedFeatured: was?.guaranteedFeatured ?? false,
      pity: was?.pity ?? 0,
      sparkPoints: was?.sparkPoints ?? 0,
      pulls: 0,
    };
    const pull = pullBanner(resolved.table, banner.rules, group, pulled.length, (k) => fairRandom(serverSeed, seed.clientSeed, seed.nextNonce + first + k));
    Object.assign(group, pull.standing, { pulls: group.pulls + pulled.length });
    banners.set(banner.group, group);
    const pity = resolved.table.pity && resolved.type.rules.pity;
    return pull.openings.map((o, k) => {
      const items = o.items.map(({ featured: _featured, ...it }) => {
        const c = resolved.collectibles.get(it.collectibleId)!;
        return { ...it, name: c.name, description: c.description, images: c.images };
      });
      return {
        openingId: randomUUID(),
        chestId: pulled[k]!.chestId,
        chestTypeId: resolved.type.id,
        openedAt,
        items,
        experience: items.reduce((sum, it) => sum + (resolved.experience.get(it.rarity) ?? 0), 0),
        rulesVersion: resolved.type.contentVersion,
        fairness: { serverSeedHash: seed.serverSeedHash, clientSeed: seed.clientSeed, nonce: seed.nextNonce + first + k },
        ...(pity
          ? { pity: { group: banner.group, rarity: pity.rarity, opensSinceBefore: o.pity.before, opensSinceAfter: o.pity.after, triggered: o.pity.triggered } }
          : {}),
        banner: {
          bannerId: banner.id,
          featured: o.banner.featured,
          guaranteedBefore: o.banner.guaranteedBefore,
          sparkPointsAfter: o.banner.sparkPointsAfter,
          floorRerolled: o.banner.floorRerolled,
        },
      };
    });
  }

  function rollOne({ chestId, resolved }: ChestToRoll, i: number): OpeningView {
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
  }
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
      ...(opening.banner
        ? { bannerId: opening.banner.bannerId, banner: { featured: opening.banner.featured, guaranteedBefore: opening.banner.guaranteedBefore } }
        : {}),
    },
    ctx,
    { notify: cmd.notify },
  );
}
