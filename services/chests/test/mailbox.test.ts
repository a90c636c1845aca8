import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AppContentSchema,
  ChestGrant,
  ClaimMailboxItem,
  GetInventory,
  ListMailbox,
  PurchaseChests,
  readContentFile,
  type AppContent,
} from '@ccs/shared';
import { chestGrantFactory } from '@ccs/shared/testing';
import {
  callOf,
  chestsApp,
  chestsSql,
  grantedChests,
  openChest,
  startChestsTier,
  type ChestsTierRun,
  type ChestsTier,
} from './support/chests-tier.js';

const content = readContentFile();

/** The demo content with inventories of 2 chests and the given overflow rule. */
function tinyContent(overflow: 'mailbox' | 'refuse'): AppContent {
  const c: AppContent = structuredClone(content);
  c.players.inventory_capacity = 2;
  c.players.inventory_overflow = overflow;
  c.players.mailbox_ttl_days = 7;
  return c;
}

// The overflow mailbox on the service tier: chests alone, grants published as players or
// collections publish them, called over its subjects. The mailbox documents, their pages, the
// claim as rendered and the gateway's refusals are end to end: test/e2e/chests/mailbox.test.ts.
describe('overflow mailbox (service tier)', () => {
  let run: ChestsTierRun;
  let tier: ChestsTier;
  let mailboxApp: { appId: string; types: Record<string, string> };
  let refuseApp: { appId: string; types: Record<string, string> };
  beforeAll(async () => {
    run = await startChestsTier();
    tier = run.tier;
    [mailboxApp, refuseApp] = await Promise.all([
      chestsApp(tier, { content: tinyContent('mailbox') }),
      chestsApp(tier, { content: tinyContent('refuse') }),
    ]);
  });
  afterAll(async () => tier?.close());

  /** A player of the app holding its starter chest and `golden` golden chests (granted as a studio grant is). */
  async function player(appId: string, golden = 0): Promise<{ playerId: string; starter: string; chests: string[] }> {
    const {
      playerId,
      chests: [starter],
    } = await grantedChests(tier, appId, { source: 'welcome' });
    const { chests } = golden ? await grantedChests(tier, appId, { playerId, chestTypeId: 'golden-chest', n: golden }) : { chests: [] };
    return { playerId, starter: starter!, chests };
  }
  /** One golden chest granted to the player, each of `times` deliveries its own message (applied one after the other). */
  async function grant(appId: string, playerId: string, times = 1): Promise<string> {
    const payload = chestGrantFactory(appId, { playerId, chestTypeId: 'golden-chest' });
    for (let i = 0; i < times; i++) await tier.publishApplied(ChestGrant, payload);
    return payload.inventoryChestId;
  }
  const inventoryOf = (appId: string, playerId: string) =>
    tier.bus.request(GetInventory, { ownerId: playerId, page: { limit: 100, offset: 0 }, order: 'asc' }, callOf(appId, playerId));
  const mailboxOf = (appId: string, playerId: string) => tier.bus.request(ListMailbox, { page: { limit: 20, offset: 0 } }, callOf(appId, playerId));
  const claim = (appId: string, playerId: string, itemId: string) => tier.bus.request(ClaimMailboxItem, { itemId }, callOf(appId, playerId));
  const buyWooden = (app: { appId: string; types: Record<string, string> }, playerId: string) =>
    tier.bus.request(PurchaseChests, { chestTypeId: app.types['wooden-chest']!, currency: 'coins', quantity: 1 }, callOf(app.appId, playerId));
  const conflict = (code: string) => ({ kind: 'conflict', errors: [{ code }] });
  const rowsWithId = async (id: string) => ({
    inventory: (await chestsSql(tier, 'SELECT 1 FROM inventory_chests WHERE id = $1', [id])).length,
    mailbox: (await chestsSql(tier, 'SELECT 1 FROM mailbox_items WHERE id = $1', [id])).length,
  });
  /** The one refusal among two settled calls, the other having answered. */
  const oneRefused = (results: PromiseSettledResult<unknown>[]) => {
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    return (results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason;
  };

  it('reads both rules from content: refuse and 30 days by default, mailbox in the demo content', () => {
    const bare = structuredClone(content) as { players: Record<string, unknown> };
    delete bare.players.inventory_overflow;
    delete bare.players.mailbox_ttl_days;
    expect(AppContentSchema.parse(bare).players).toMatchObject({ inventory_overflow: 'refuse', mailbox_ttl_days: 30 });
    expect(content.players).toMatchObject({ inventory_overflow: 'mailbox', mailbox_ttl_days: 30 });
    for (const bad of [{ inventory_overflow: 'drop' }, { mailbox_ttl_days: 0 }, { mailbox_ttl_days: 1.5 }]) {
      expect(AppContentSchema.safeParse({ ...content, players: { ...content.players, ...bad } }).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('lets one of two concurrent claims win: the same item, and two items for one free place', async () => {
    const { appId } = mailboxApp;
    const {
      playerId,
      starter,
      chests: [held],
    } = await player(appId, 1);
    const [a, b, c] = [await grant(appId, playerId), await grant(appId, playerId), await grant(appId, playerId)];
    expect((await mailboxOf(appId, playerId)).total).toBe(3);

    await openChest(tier, appId, playerId, starter);
    const same = await Promise.allSettled([claim(appId, playerId, a), claim(appId, playerId, a)]);
    expect(oneRefused(same)).toMatchObject(conflict('mailbox_item_claimed'));
    expect(await rowsWithId(a)).toEqual({ inventory: 1, mailbox: 1 });

    await openChest(tier, appId, playerId, held!);
    const two = await Promise.allSettled([claim(appId, playerId, b), claim(appId, playerId, c)]);
    expect(oneRefused(two)).toMatchObject(conflict('inventory_full'));
    expect(await inventoryOf(appId, playerId)).toMatchObject({ capacity: 2, totalChests: 2 });
    expect((await mailboxOf(appId, playerId)).total).toBe(1);
  });

  it('still refuses a purchase beyond capacity before any debit, and leaves the mailbox alone', async () => {
    const { playerId } = await player(mailboxApp.appId, 1);
    run.wallet.credit(playerId, 'coins', 1500);
    await expect(buyWooden(mailboxApp, playerId)).rejects.toMatchObject(conflict('inventory_full'));
    expect(run.wallet.balance(playerId, 'coins')).toBe(1500);
    expect([...run.wallet.debits.values()].filter((d) => d.playerId === playerId)).toEqual([]);
    expect((await mailboxOf(mailboxApp.appId, playerId)).total).toBe(0);
  });

  it('with refuse, adds grants beyond the capacity (never lost, no mailbox) and still refuses purchases', async () => {
    const { appId } = refuseApp;
    const { playerId } = await player(appId);
    const granted = [await grant(appId, playerId), await grant(appId, playerId, 2), await grant(appId, playerId)];
    const inv = await inventoryOf(appId, playerId);
    expect(inv).toMatchObject({ capacity: 2, totalChests: 4 });
    expect(inv.chests.map((ch) => ch.id)).toEqual(expect.arrayContaining(granted));
    expect((await mailboxOf(appId, playerId)).total).toBe(0);
    expect(await chestsSql(tier, 'SELECT 1 FROM mailbox_items WHERE player_id = $1', [playerId])).toEqual([]);
    run.wallet.credit(playerId, 'coins', 1500);
    await expect(buyWooden(refuseApp, playerId)).rejects.toMatchObject(conflict('inventory_full'));
    expect(run.wallet.balance(playerId, 'coins')).toBe(1500);
  });
});
