import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readContentFile, type AppContent } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../../support/stack.js';
import { runAdminIn } from '../../../tools/admin/test/support/run-admin.js';
import { appIdOf, createApp, defaultCatalogIds, get, inventory, registerPlayer, type Player } from '../../../services/chests/test/support/chests.js';

/**
 * `npm run admin -- grant-chest` (the singular spelling of grant-chests): exactly-once studio
 * grants through the players outbox, checked through the player's own API; unknown app, player
 * and chest refused in one line. In process against the real stack.
 */
describe('admin grant-chest', () => {
  let stack: TestStack;
  let small: { appId: string; publishableKey: string };
  let demoAppId: string;

  beforeAll(async () => {
    stack = await startStack();
    const content: AppContent = structuredClone(readContentFile());
    content.players.inventory_capacity = 1;
    content.players.inventory_overflow = 'mailbox';
    small = await createApp(stack, content);
    demoAppId = await appIdOf(stack);
  });
  afterAll(async () => stack?.close());

  const admin = (argv: string[]) => runAdminIn(stack, argv);
  const player = async (apiKey = stack.apiKey): Promise<Player> => {
    const p = await registerPlayer(stack, apiKey);
    await eventually(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(1), 20_000);
    return p;
  };
  const specialIds = async (p: Player): Promise<string[]> =>
    (await inventory(stack, p)).data
      .filter((c: { meta: { source: string } }) => c.meta.source === 'special')
      .map((c: { id: string }) => c.id)
      .sort();
  const mailboxIds = async (p: Player): Promise<string[]> => {
    const res = await get(stack, '/api/v1/players/me/mailbox', p.token, p.apiKey);
    expect(res.statusCode, res.body).toBe(200);
    return res
      .json()
      .data.map((m: { id: string }) => m.id)
      .sort();
  };

  it('grants 2 chests by catalog id; the same --reference grants nothing more, another player or no reference gets new ids', async () => {
    const [p, q] = [await player(), await player()];
    const silverId = (await defaultCatalogIds(stack))['Silver Chest']!;
    expect(silverId).toMatch(/^[0-9a-f-]{36}$/);
    const args = (who: Player, extra: string[] = ['--reference', 'event-2026-spring']) => [
      'grant-chest',
      '--app',
      demoAppId,
      '--player',
      who.id,
      '--chest',
      silverId,
      '--quantity',
      '2',
      ...extra,
      '--json',
    ];

    const first = await admin(args(p));
    expect([first.code, first.err]).toEqual([0, '']);
    const granted: string[] = JSON.parse(first.out).chests;
    expect(JSON.parse(first.out)).toMatchObject({ appId: demoAppId, playerId: p.id, chestType: 'silver-chest', reference: 'event-2026-spring' });
    expect(new Set(granted).size).toBe(2);
    await eventually(async () => expect(await specialIds(p)).toEqual([...granted].sort()), 20_000);

    // The same command again: the same ids, nothing more in the inventory.
    const again = await admin(args(p));
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out).chests).toEqual(granted);
    await new Promise((r) => setTimeout(r, 500));
    expect((await inventory(stack, p)).meta.total_chests).toBe(3);
    expect(await specialIds(p)).toEqual([...granted].sort());

    // The reference is per player: another player gets ids of their own.
    const other = await admin(args(q));
    expect(other.code, other.err).toBe(0);
    const otherIds: string[] = JSON.parse(other.out).chests;
    expect(otherIds.filter((id) => granted.includes(id))).toEqual([]);
    await eventually(async () => expect(await specialIds(q)).toEqual([...otherIds].sort()), 20_000);

    // Without a reference every run is a new grant.
    const loose = await Promise.all([admin(args(p, [])), admin(args(p, []))]);
    const looseIds = loose.flatMap((r) => JSON.parse(r.out).chests as string[]);
    expect(new Set([...looseIds, ...granted]).size).toBe(6);
    await eventually(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(7), 20_000);
  });

  it('sends the chests that do not fit to the mailbox, once for a reference', async () => {
    const p = await player(small.publishableKey);
    const args = ['grant-chest', '--app', small.appId, '--player', p.id, '--chest', 'wooden-chest', '--quantity', '2', '--reference', 'comp-7'];
    const r = await admin(args);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toBe(`Granted 2 Wooden Chests to player ${p.id}:`);
    const granted = lines.slice(1).map((l) => l.trim());
    expect(granted).toHaveLength(2);
    await eventually(async () => expect(await mailboxIds(p)).toEqual([...granted].sort()), 20_000);

    expect((await admin(args)).code).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    expect(await mailboxIds(p)).toEqual([...granted].sort());
    expect((await inventory(stack, p)).meta.total_chests).toBe(1);
  });

  it('refuses an unknown app, player or chest with a clear line and exit code 1', async () => {
    const p = await player();
    const noApp = randomUUID();
    expect(await admin(['grant-chest', '--app', noApp, '--player', p.id, '--chest', 'silver-chest'])).toEqual({
      code: 1,
      out: '',
      err: `No app ${noApp}. List the apps with: npm run admin -- list-apps`,
    });

    const nobody = randomUUID();
    expect(await admin(['grant-chest', '--app', demoAppId, '--player', nobody, '--chest', 'silver-chest'])).toEqual({
      code: 1,
      out: '',
      err: `App ${demoAppId} has no player "${nobody}".`,
    });
    // A player of another app is not a player of this one.
    expect((await admin(['grant-chest', '--app', small.appId, '--player', p.id, '--chest', 'wooden-chest'])).err).toBe(
      `App ${small.appId} has no player "${p.id}".`,
    );

    const noChest = await admin(['grant-chest', '--app', demoAppId, '--player', p.id, '--chest', 'mythic-chest']);
    expect([noChest.code, noChest.out]).toEqual([1, '']);
    expect(noChest.err).toMatch(
      /^App \S+ has no chest "mythic-chest"; its chests: wooden-chest, silver-chest\b.*\. Pass one of these slugs \(or a catalog id\) to --chest\.$/,
    );

    const tooMany = await admin(['grant-chest', '--app', demoAppId, '--player', p.id, '--chest', 'silver-chest', '--quantity', '101']);
    expect([tooMany.code, tooMany.err.split('\n')[0]]).toEqual([2, '--quantity takes a whole number from 1 to 100, not "101"']);
    await new Promise((r) => setTimeout(r, 300));
    expect((await inventory(stack, p)).meta.total_chests).toBe(1);
  });
});
