import { randomUUID } from 'node:crypto';
import { AppContentLoaded, ChestGrant, OpeningGranted, WalletCreditGrant } from '../contracts/events.js';
import type { AppContent } from '../contracts/content.js';
import { readContentFile } from '../contracts/default-content.js';
import type { z } from 'zod';
import type { EventContract } from '../contracts/subject.js';
import type { PublishOptions } from './service-tier.js';

/**
 * Fixtures as factories (docs/guide.md, "Tests"): each builds or delivers one thing with defaults that
 * work as they are, and takes overrides for what a test is about.
 */

/** Whatever can publish durable messages and wait until they are applied (a ServiceTier). */
export interface Publisher {
  publishApplied<P extends z.ZodType>(event: EventContract<P>, payload: z.infer<P>, opts?: PublishOptions & { timeoutMs?: number }): Promise<string>;
}

/** The project's default content, a fresh copy, changed by `edit` when given. */
export function contentFactory(edit?: (content: AppContent) => AppContent | void): AppContent {
  const content = structuredClone(readContentFile());
  return edit?.(content) ?? content;
}

/**
 * `content` without an odds change notice: no `odds_change_notice_hours` and not the KR rule pack
 * (the demo content applies it), for a test whose next version's rules must roll at once.
 */
export function withoutOddsNotice(content: AppContent): AppContent {
  const { odds_change_notice_hours: _n, ...compliance } = content.compliance ?? {
    paid_currencies: [],
    blocked_regions: [],
    forbid_complete_gacha: false,
  };
  return { ...content, compliance: { ...compliance, rule_packs: (compliance.rule_packs ?? []).filter((p) => p !== 'KR') } };
}

/**
 * An app's content delivered as the players service's outbox does (AppContentLoaded), applied:
 * defaults to a fresh app id, version 1 and the default content. Answers the app id.
 */
export async function loadedApp(tier: Publisher, overrides: { appId?: string; version?: number; content?: AppContent } = {}): Promise<string> {
  const appId = overrides.appId ?? randomUUID();
  await tier.publishApplied(AppContentLoaded, { appId, version: overrides.version ?? 1, content: overrides.content ?? contentFactory() });
  return appId;
}

/** The payload of a credit grant: defaults to 100 coins for a fresh player, reason `admin`. */
export function creditGrantFactory(
  appId: string,
  overrides: Partial<z.infer<(typeof WalletCreditGrant)['payload']>> = {},
): z.infer<(typeof WalletCreditGrant)['payload']> {
  return { appId, playerId: randomUUID(), reason: 'admin', credits: [{ currency: 'coins', amount: '100' }], ...overrides };
}

/**
 * The payload of an opening's grant as the chests relay publishes it: defaults to a fresh opening
 * now, one common item of the default content's ancient relics, 10 experience.
 */
export function openingGrantFactory(
  appId: string,
  playerId: string,
  overrides: Partial<z.infer<(typeof OpeningGranted)['payload']>> = {},
): z.infer<(typeof OpeningGranted)['payload']> {
  return {
    openingId: randomUUID(),
    appId,
    playerId,
    chestTypeId: 'wooden-chest',
    openedAt: new Date().toISOString(),
    experience: 10,
    items: [{ slot: 0, collectibleId: 'ancient-clay-amulet', collectionId: 'ancient-relics', rarity: 'common' }],
    ...overrides,
  };
}

/**
 * The payload of a chest grant as players or collections publish it: defaults to a fresh wooden
 * chest (the default content's slug) for a fresh player, source `special` (a studio grant).
 */
export function chestGrantFactory(
  appId: string,
  overrides: Partial<z.infer<(typeof ChestGrant)['payload']>> = {},
): z.infer<(typeof ChestGrant)['payload']> {
  return { appId, playerId: randomUUID(), inventoryChestId: randomUUID(), chestTypeId: 'wooden-chest', source: 'special', ...overrides };
}
