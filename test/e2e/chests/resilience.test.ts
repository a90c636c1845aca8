import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChestGrant, grantsStream, healthSubject, streamName } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../../support/stack.js';
import { expectError } from '../../support/jsonapi-schema.js';
import { appIdOf, open, registerPlayer, sql, waitForStarterChest, type Player } from '../../../services/chests/test/support/chests.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Grants count: items each opening rolled, against the rows collections holds for it. */
async function grantCounts(stack: TestStack, openingIds: string[]) {
  return sql<{ id: string; expected: number; granted: number }>(
    stack,
    `SELECT o.id, jsonb_array_length(o.items) AS expected,
            (SELECT count(*) FROM collections.owned_collectibles g WHERE g.opening_id = o.id)::int AS granted
     FROM chests.openings o WHERE o.id = ANY($1::uuid[])`,
    [openingIds],
  );
}

// The opening saga across failures of the whole stack: collections down, a chests process dying
// between its commit and its publish, the relay publishing again. Every case needs collections
// applying grants and chests restarting among the others, so the file stays end to end.
describe('the opening saga across failures', () => {
  let stack: TestStack;
  let appId: string;

  beforeAll(async () => {
    stack = await startStack({ env: { GRANT_WAIT_MS: '500', NATS_REQUEST_TIMEOUT_MS: '3000' } });
    appId = await appIdOf(stack);
  });
  afterAll(async () => stack?.close());

  /** A player with `extra` more chests, granted through the durable grant message. */
  async function playerWithChests(extra: number): Promise<{ player: Player; chests: string[] }> {
    const player = await registerPlayer(stack);
    await waitForStarterChest(stack, player);
    const chests = [player.starterChestId];
    const js = stack.nc.jetstream();
    for (let i = 0; i < extra; i++) {
      const id = randomUUID();
      chests.push(id);
      const payload = ChestGrant.payload.parse({ appId, playerId: player.id, inventoryChestId: id, chestTypeId: 'wooden-chest', source: 'earned' });
      await js.publish(`${stack.env.NATS_PREFIX}.${ChestGrant.subject}`, JSON.stringify(payload), { msgID: randomUUID() });
    }
    await eventually(async () => {
      const rows = await sql(stack, 'SELECT id FROM chests.inventory_chests WHERE id = ANY($1::uuid[])', [chests]);
      expect(rows).toHaveLength(chests.length);
    });
    return { player, chests };
  }

  it('answers 200 to 20 opens while collections is down, and every grant lands exactly once after it restarts', async () => {
    const { player, chests } = await playerWithChests(19);
    await stack.stopService('collections');
    let openingIds: string[];
    try {
      const results = await Promise.all(chests.map((id) => open(stack, player, id)));
      for (const r of results) expect(r.statusCode, r.body).toBe(200);
      for (const r of results) expect(r.json().meta.message).toMatch(/on their way/);
      openingIds = results.map((r) => r.json().meta.opening_id);
      expect(new Set(openingIds).size).toBe(20);
      for (const c of await grantCounts(stack, openingIds)) expect(c.granted).toBe(0);
    } finally {
      await stack.startService('collections');
    }
    await eventually(async () => {
      const counts = await grantCounts(stack, openingIds);
      expect(counts).toHaveLength(20);
      for (const c of counts) expect(c.granted).toBe(c.expected);
    }, 20_000);
    // Nothing more arrives later: exactly once.
    await new Promise((r) => setTimeout(r, 500));
    for (const c of await grantCounts(stack, openingIds)) expect(c.granted).toBe(c.expected);
  });

  it('publishes on restart a grant committed by a chests process that died before publishing', async () => {
    const { player, chests } = await playerWithChests(0);
    await stack.stopService('chests');
    let child: ChildProcess | undefined;
    let exitCode: Promise<number | null>;
    try {
      child = spawn(process.execPath, ['--import', 'tsx', '--conditions=development', 'services/chests/test/support/exit-after-open-commit.ts'], {
        cwd: ROOT,
        env: { ...process.env, ...stack.env },
        stdio: 'ignore',
      });
      exitCode = new Promise((resolve) => child!.once('exit', (code) => resolve(code)));
      await eventually(() => stack.bus.request(healthSubject('chests'), {}, { requestId: 'child-ready' }, { timeoutMs: 500 }), 30_000, 250);
      expectError(await open(stack, player, chests[0]!), 504, 'service_timeout');
      expect(await exitCode).toBe(86);
    } finally {
      if (child && child.exitCode === null) child.kill('SIGKILL');
    }
    const [opening] = await sql<{ id: string }>(stack, 'SELECT id FROM chests.openings WHERE chest_id = $1', [chests[0]]);
    expect(opening).toBeDefined();
    expect(await sql(stack, 'SELECT published_at FROM chests.outbox WHERE id = $1', [opening!.id])).toEqual([{ published_at: null }]);
    expect((await grantCounts(stack, [opening!.id]))[0]!.granted).toBe(0);

    await stack.startService('chests');
    await eventually(async () => {
      const [c] = await grantCounts(stack, [opening!.id]);
      expect(c!.granted).toBe(c!.expected);
    }, 20_000);
    const [row] = await sql<{ published_at: Date | null }>(stack, 'SELECT published_at FROM chests.outbox WHERE id = $1', [opening!.id]);
    expect(row!.published_at).not.toBeNull();
    expectError(await open(stack, player, chests[0]!), 403, 'chest_already_opened');
  });

  it('applies a grant once when the relay publishes it again, also after the stream forgot its id', async () => {
    const { player } = await playerWithChests(0);
    const res = await open(stack, player, player.starterChestId);
    expect(res.statusCode).toBe(200);
    const openingId: string = res.json().meta.opening_id;
    const [before] = await grantCounts(stack, [openingId]);
    expect(before!.granted).toBe(before!.expected);
    await sql(stack, 'UPDATE chests.outbox SET published_at = NULL WHERE id = $1', [openingId]);
    await eventually(async () => {
      const [row] = await sql<{ published_at: Date | null }>(stack, 'SELECT published_at FROM chests.outbox WHERE id = $1', [openingId]);
      expect(row!.published_at).not.toBeNull();
    });
    await new Promise((r) => setTimeout(r, 500));
    const [after] = await grantCounts(stack, [openingId]);
    expect(after!.granted).toBe(before!.expected);

    // Past the duplicate window the stream stores the re-publish as a new message: collections
    // receives it and must still change nothing.
    const jsm = await stack.nc.jetstreamManager();
    const stream = grantsStream(stack.env.NATS_PREFIX!);
    const info = await jsm.streams.info(stream);
    await jsm.streams.update(stream, { ...info.config, duplicate_window: 100 * 1e6 });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const stored = (await jsm.streams.info(stream)).state.messages;
      await sql(stack, 'UPDATE chests.outbox SET published_at = NULL WHERE id = $1', [openingId]);
      const lastSeq = await eventually(async () => {
        const state = (await jsm.streams.info(stream)).state;
        expect(state.messages).toBe(stored + 1);
        return state.last_seq;
      });
      // Wait until collections' consumer has received and acknowledged the re-published grant.
      const consumer = streamName(stack.env.NATS_PREFIX!, 'collections-openings');
      await eventually(async () => {
        const ci = await jsm.consumers.info(stream, consumer);
        expect(ci.delivered.stream_seq).toBeGreaterThanOrEqual(lastSeq);
        expect(ci.num_ack_pending + ci.num_pending).toBe(0);
      });
      const [late] = await grantCounts(stack, [openingId]);
      expect(late!.granted).toBe(before!.expected);
    } finally {
      await jsm.streams.update(stream, { ...info.config });
    }
  });
});
