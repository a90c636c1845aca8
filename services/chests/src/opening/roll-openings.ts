import { randomUUID } from 'node:crypto';
import {
  fairRandom,
  nextCounter,
  pullBanner,
  type BannerRules,
  type BannerStanding,
  type RolledItem,
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

/** The banner a chest opens as (docs/design.md §8): its id, its pity group and its rules (with their logged version, when they have one). */
export interface BannerToRoll {
  id: string;
  group: string;
  rules: BannerRules;
  rulesVersion?: number;
}

/** One chest to roll: its id and its type's drop table as the opening's state resolved it; a banner pull's chest, its banner. */
export interface ChestToRoll {
  chestId: string;
  resolved: ResolvedChestType;
  banner?: BannerToRoll;
}

/**
 * The player's standings the banner chests roll from, per pity group: the flag, the counter and the
 * spark points (absent: none yet). The points as read only seed each opening's `sparkPointsAfter`;
 * the write sets them from the points it stored (spark-points.ts).
 */
export type BannerStandings = Map<string, Pick<BannerStanding, 'guaranteedFeatured' | 'pity' | 'sparkPoints'>>;

/**
 * Rolls the chests in order (one for a single open): consecutive nonces from the pair's next one,
 * each from the HMAC-SHA256 stream of (server seed, client seed, nonce) (docs/fairness.md), from
 * the drop table as the pity counter adjusts it (pity.ts), each group's counter carried from one
 * opening to the next. A banner pull's chests roll as its pulls (pullBanner), the banner group's
 * standing carried the same way.
 */
// eslint-disable-next-line max-lines-per-function -- one roll read top to bottom, with the counters and standings it carries from chest to chest in view
export function rollOpenings(
  chests: ChestToRoll[],
  seed: ActiveSeed,
  serverSeed: string,
  counters: Map<string, number>,
  standings: BannerStandings = new Map(),
): Rolled {
  const openedAt = new Date().toISOString();
  const random = (nonce: number) => fairRandom(serverSeed, seed.clientSeed, nonce);
  // Each chest pity group's counter as the openings move it, and its final value.
  const counter = new Map(counters);
  const finals = new Map<string, PityCounter>();
  // The banner groups' standings as the pulls move them (from those read before the roll).
  const moved = new Map<string, BannerStandingAfter & { sparkPoints: number }>();
  const openings: OpeningView[] = [];
  for (let i = 0; i < chests.length;) {
    const { chestId, resolved, banner } = chests[i]!;
    const rule = resolved.table.pity && resolved.type.rules.pity;
    if (!banner) {
      // One chest, its pity group's counter carried.
      const group = pityGroupOf(resolved.type);
      const before = group ? (counter.get(group) ?? 0) : 0;
      const nonce = seed.nextNonce + i;
      const items = rollTable(tableAtCounter(resolved.table, before), random(nonce));
      const after = nextCounter(resolved.table, before, items);
      if (group && rule) {
        counter.set(group, after);
        finals.set(group, { group, opensSince: after, rarity: rule.rarity, hard: rule.hard });
      }
      openings.push({
        ...openingOf(seed, openedAt, chestId, resolved, items, nonce),
        ...(group && rule
          ? { pity: { group, rarity: rule.rarity, opensSinceBefore: before, opensSinceAfter: after, triggered: before >= rule.hard - 1 } }
          : {}),
      });
      i += 1;
      continue;
    }
    // A banner pull of 1 or 10 chests, the group's standing carried.
    const pulled = chests.slice(i, i + pullLength(chests, i));
    const was = standings.get(banner.group);
    const standing = moved.get(banner.group) ?? {
      group: banner.group,
      guaranteedFeatured: was?.guaranteedFeatured ?? false,
      pity: was?.pity ?? 0,
      sparkPoints: was?.sparkPoints ?? 0,
      pulls: 0,
    };
    const nonce = (k: number) => seed.nextNonce + i + k;
    const pull = pullBanner(resolved.table, banner.rules, standing, pulled.length, (k) => random(nonce(k)));
    moved.set(banner.group, { ...standing, ...pull.standing, pulls: standing.pulls + pulled.length });
    for (const [k, o] of pull.openings.entries()) {
      openings.push({
        ...openingOf(seed, openedAt, pulled[k]!.chestId, resolved, o.items, nonce(k)),
        ...(rule
          ? {
              pity: {
                group: banner.group,
                rarity: rule.rarity,
                opensSinceBefore: o.pity.before,
                opensSinceAfter: o.pity.after,
                triggered: o.pity.triggered,
              },
            }
          : {}),
        banner: {
          ...(banner.rulesVersion !== undefined ? { rulesVersion: banner.rulesVersion } : {}),
          bannerId: banner.id,
          featured: o.banner.featured,
          guaranteedBefore: o.banner.guaranteedBefore,
          sparkPointsAfter: o.banner.sparkPointsAfter,
          floorRerolled: o.banner.floorRerolled,
        },
      });
    }
    i += pulled.length;
  }
  return { openings, counters: [...finals.values()], banners: [...moved.values()].map(({ sparkPoints: _points, ...after }) => after) };
}

/** How many chests from the i-th roll as one: a ten-pull is ten chests of one banner in a row (a pull's batch); else one. */
function pullLength(chests: ChestToRoll[], i: number): number {
  const banner = chests[i]!.banner;
  if (!banner) return 1;
  let run = 1;
  while (run < 10 && i + run < chests.length && chests[i + run]!.banner?.id === banner.id) run++;
  return run === 10 ? 10 : 1;
}

/** An opening as recorded: its items with their collectibles' presentation, its experience and its stream's inputs. */
function openingOf(
  seed: ActiveSeed,
  openedAt: string,
  chestId: string,
  resolved: ResolvedChestType,
  rolled: RolledItem[],
  nonce: number,
): OpeningView {
  const items = rolled.map(({ slot, collectibleId, collectionId, rarity }) => {
    const c = resolved.collectibles.get(collectibleId)!;
    return { slot, collectibleId, collectionId, rarity, name: c.name, description: c.description, images: c.images };
  });
  return {
    openingId: randomUUID(),
    chestId,
    chestTypeId: resolved.type.id,
    openedAt,
    items,
    experience: items.reduce((sum, it) => sum + (resolved.experience.get(it.rarity) ?? 0), 0),
    rulesVersion: resolved.type.contentVersion,
    fairness: { serverSeedHash: seed.serverSeedHash, clientSeed: seed.clientSeed, nonce },
  };
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
