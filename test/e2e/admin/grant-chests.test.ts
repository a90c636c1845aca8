import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readContentFile, type AppContent } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../../support/stack.js';
import { runAdminIn } from '../../../tools/admin/test/support/run-admin.js';
import { appIdOf, createApp, defaultCatalogIds, get, inventory, registerPlayer, type Player } from '../../../services/chests/test/support/chests.js';

/**
 * `npm run admin -- grant-chests` and its singular spelling `grant-chest`: exactly-once studio
 * grants through the players outbox, checked through the player's own API; unknown app, player
 * and chest refused in one line. In process against one real stack.
 */
describe('admin grant-chests and grant-chest', () => {
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

  describe('grant-chests', () => {
    async function admin(argv: string[]) {
      const r = await runAdminIn(stack, argv);
      return { ...r, json: argv.includes('--json') && r.code === 0 ? JSON.parse(r.out) : undefined };
    }

    it('grants chests by slug into the inventory; the same --reference grants nothing more', async () => {
      const p = await player();
      const args = [
        'grant-chests',
        '--app',
        demoAppId,
        '--player',
        p.id,
        '--chest',
        'silver-chest',
        '--quantity',
        '2',
        '--reference',
        'incident-42',
        '--json',
      ];
      const first = await admin(args);
      expect([first.code, first.err]).toEqual([0, '']);
      expect(first.json).toMatchObject({ playerId: p.id, chestType: 'silver-chest', reference: 'incident-42' });
      expect(first.json.chests).toHaveLength(2);
      await eventually(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(3), 20_000);
      const chests = (await inventory(stack, p)).data.filter((c: { meta: { source: string } }) => c.meta.source === 'special');
      expect(chests.map((c: { id: string }) => c.id).sort()).toEqual([...first.json.chests].sort());

      expect(first.json.replayed).toBe(false);
      const again = await admin(args);
      expect(again.json).toMatchObject({ chests: first.json.chests, replayed: true });
      // In words too: the operator is told nothing was added, not "Granted 2".
      const text = await admin(args.filter((a) => a !== '--json'));
      expect(text.code, text.err).toBe(0);
      expect(text.out).toMatch(/^Nothing granted: reference incident-42 already granted 2 Silver Chests to player /);
      // The same reference for another grant is refused, and adds nothing either.
      const other = await admin(args.map((a) => (a === '2' ? '3' : a)));
      expect(other.code).toBe(1);
      expect(other.err).toMatch(/reference incident-42 already granted this player 2 × silver-chest/i);
      await new Promise((r) => setTimeout(r, 500));
      expect((await inventory(stack, p)).meta.total_chests).toBe(3);
    });

    it('sends what does not fit to the mailbox', async () => {
      const p = await player(small.publishableKey);
      const r = await admin(['grant-chests', '--app', small.appId, '--player', p.id, '--chest', 'wooden-chest']);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toMatch(/^Granted 1 Wooden Chest to player /);
      await eventually(async () => {
        const mailbox = (await get(stack, '/api/v1/players/me/mailbox', p.token, small.publishableKey)).json();
        expect(mailbox.data.map((m: { id: string }) => m.id)).toEqual([r.out.split('\n')[1]!.trim()]);
      }, 20_000);
    });

    it('refuses an unknown player or chest with one clear line, and bad options with the usage', async () => {
      const p = await player();
      const noPlayer = await admin(['grant-chests', '--app', demoAppId, '--player', 'nobody@example.com', '--chest', 'silver-chest']);
      expect([noPlayer.code, noPlayer.err]).toEqual([1, `App ${demoAppId} has no player "nobody@example.com".`]);
      const noChest = await admin(['grant-chests', '--app', demoAppId, '--player', p.id, '--chest', 'diamond-chest']);
      expect(noChest.code).toBe(1);
      expect(noChest.err).toMatch(/^App .* has no chest "diamond-chest"; its chests: wooden-chest, silver-chest, /);
      const badQuantity = await admin(['grant-chests', '--app', demoAppId, '--player', p.id, '--chest', 'silver-chest', '--quantity', '0']);
      expect([badQuantity.code, badQuantity.err.split('\n')[0]]).toEqual([2, '--quantity takes a whole number from 1 to 100, not "0"']);
      expect((await inventory(stack, p)).meta.total_chests).toBe(1);
    });
  });

  describe('grant-chest (the singular spelling)', () => {
    const admin = (argv: string[]) => runAdminIn(stack, argv);

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
});
