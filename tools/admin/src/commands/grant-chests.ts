import { AdminGrantChests, ListChestTypes, type ReplyOf } from '@ccs/shared';
import { AdminFailure, adminCall, findPlayerOrFail, required, requiredAppId, UsageError, type AdminContext } from '../output.js';

/**
 * `grant-chests --app <id> --player <id|email> --chest <id|slug> [--quantity 1] [--reference <text>]`:
 * a studio grant (compensation, an event prize). The chests arrive as durable grants: in the
 * inventory, or in the overflow mailbox when it is full. With --reference, running the same
 * command again grants nothing more.
 */
export async function grantChestsCommand(
  c: AdminContext,
  o: { app?: string; player?: string; chest?: string; quantity?: string; reference?: string },
): Promise<number> {
  const appId = requiredAppId(o.app);
  const who = required(o.player, 'player');
  const chest = required(o.chest, 'chest');
  const quantity = o.quantity === undefined ? 1 : Number(o.quantity);
  if (!/^\d+$/.test(o.quantity ?? '1') || quantity < 1 || quantity > 100)
    throw new UsageError(`--quantity takes a whole number from 1 to 100, not "${o.quantity}"`);
  if (o.reference !== undefined && !/^[\x21-\x7e]{1,100}$/.test(o.reference)) {
    throw new UsageError('--reference takes 1 to 100 printable ASCII characters without spaces (e.g. an incident or event id)');
  }

  const player = await findPlayerOrFail(c, appId, who);
  // The chest type, by slug or catalog id, from the app's current catalog (every page of it).
  const chests: ReplyOf<typeof ListChestTypes>['chests'] = [];
  for (;;) {
    const page = await c.bus.request(
      ListChestTypes,
      { sort: [], page: { limit: 100, offset: chests.length } },
      { ...adminCall(), appId },
      { timeoutMs: 5000 },
    );
    chests.push(...page.chests);
    if (page.chests.length === 0 || chests.length >= page.total) break;
  }
  const type = chests.find((t) => t.slug === chest || t.id === chest.toLowerCase());
  if (!type) {
    throw new AdminFailure(
      `App ${appId} has no chest "${chest}"; its chests: ${chests.map((t) => t.slug).join(', ') || 'none'}. Pass one of these slugs (or a catalog id) to --chest.`,
    );
  }

  const r = await c.bus.request(
    AdminGrantChests,
    { appId, playerId: player.playerId, chestTypeId: type.slug, quantity, ...(o.reference ? { reference: o.reference } : {}) },
    adminCall(),
  );
  if (c.json) {
    c.io.out(
      JSON.stringify({ appId, playerId: r.playerId, chestType: type.slug, chests: r.chests, reference: o.reference ?? null, replayed: r.replayed }),
    );
    return 0;
  }
  if (r.replayed) {
    c.io.out(
      `Nothing granted: reference ${o.reference} already granted ${r.chests.length} ${type.name}${r.chests.length === 1 ? '' : 's'} to player ${r.playerId}:`,
    );
    for (const id of r.chests) c.io.out(`  ${id}`);
    return 0;
  }
  c.io.out(`Granted ${r.chests.length} ${type.name}${r.chests.length === 1 ? '' : 's'} to player ${r.playerId}:`);
  for (const id of r.chests) c.io.out(`  ${id}`);
  c.io.progress(
    `They reach the inventory within moments (the mailbox when it is full)${o.reference ? `; granting again with --reference ${o.reference} adds nothing` : ''}.`,
  );
  return 0;
}
