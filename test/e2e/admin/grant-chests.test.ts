import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readContentFile, type AppContent } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../../support/stack.js';
import { runAdminIn } from '../../../tools/admin/test/support/run-admin.js';
import { appIdOf, createApp, get, inventory, registerPlayer, type Player } from '../../../services/chests/test/support/chests.js';

/** `npm run admin -- grant-chests`: studio grants, in process against the real stack. */
describe('admin grant-chests', () => {
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

  async function admin(argv: string[]) {
    const r = await runAdminIn(stack, argv);
    return { ...r, json: argv.includes('--json') && r.code === 0 ? JSON.parse(r.out) : undefined };
  }
  const player = async (apiKey = stack.apiKey): Promise<Player> => {
    const p = await registerPlayer(stack, apiKey);
    await eventually(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(1), 20_000);
    return p;
  };

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
