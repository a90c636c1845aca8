import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsStream, OpeningGranted, prefixed, streamName } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { appIdOf, registerPlayer, sql, type Player } from '../../services/chests/test/support/chests.js';
import { holdLock, waitForLockWaiters, type HeldLock } from './support/held-lock.js';
import { startReplica, type Replica } from './support/replica.js';

// The durable consumer of collections (opening grants) under stops: a message stays "in hand"
// while the test holds, uncommitted, the processed_messages row its transaction must insert.

const DURABLE = 'collections-openings';

describe('durable consumers when a replica stops', () => {
  let stack: TestStack;
  let appId: string;
  let player: Player;
  const replicas: Replica[] = [];
  const locks: HeldLock[] = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['players', 'wallet', 'chests'] });
    appId = await appIdOf(stack);
    player = await registerPlayer(stack);
  });
  afterAll(async () => {
    for (const l of locks) await l.release();
    await Promise.all(replicas.map((r) => r.terminate(5000)));
    await stack?.close();
  });

  const prefix = () => stack.env.NATS_PREFIX!;
  const consumerInfo = async () => (await stack.nc.jetstreamManager()).consumers.info(grantsStream(prefix()), streamName(prefix(), DURABLE));
  const replica = async (label: string) => {
    const r = await startReplica('collections', stack.env, label);
    replicas.push(r);
    await r.waitReady();
    return r;
  };
  /** Publishes an opening grant of two items, as chests does; returns its id. */
  const publishGrant = async (openingId: string = randomUUID()) => {
    const payload = OpeningGranted.payload.parse({
      openingId,
      appId,
      playerId: player.id,
      chestTypeId: 'wooden-chest',
      openedAt: new Date().toISOString(),
      experience: 10,
      items: [
        { slot: 0, collectibleId: 'ancient-clay-amulet', collectionId: 'ancient-relics', rarity: 'common' },
        { slot: 1, collectibleId: 'ancient-bronze-coin', collectionId: 'ancient-relics', rarity: 'common' },
      ],
    });
    await stack.nc.jetstream().publish(prefixed(prefix(), OpeningGranted.subject), JSON.stringify(payload), { msgID: openingId });
    return openingId;
  };
  /**
   * Holds the message "in hand": an uncommitted row with the key of its first item, so the
   * consumer's insert of that item waits on it (released by rolling back).
   */
  const holdMessage = async (openingId: string) => {
    const l = await holdLock(
      stack.env.DATABASE_URL!,
      `INSERT INTO collections.owned_collectibles (opening_id, slot, app_id, player_id, collectible_id, collection_id, rarity, acquired_at)
       VALUES ($1, 0, $2, $3, 'ancient-clay-amulet', 'ancient-relics', 'common', now())`,
      [openingId, appId, player.id],
    );
    locks.push(l);
    return l;
  };
  /** Items collections holds per opening (2 each when granted exactly once). */
  const granted = async (ids: string[]) =>
    (
      await sql<{ n: number }>(
        stack,
        'SELECT count(*)::int AS n FROM collections.owned_collectibles WHERE opening_id = ANY($1::uuid[]) GROUP BY opening_id',
        [ids],
      )
    ).map((r) => r.n);

  it('a stopping replica finishes the message in hand and every message it had pulled, each once, then exits 0', async () => {
    const c1 = await replica('collections#1');
    const first = randomUUID();
    const lock = await holdMessage(first);
    // The held one first, then twenty more behind it.
    const ids = [await publishGrant(first)];
    for (let i = 0; i < 20; i++) ids.push(await publishGrant());
    await waitForLockWaiters(stack.env.DATABASE_URL!);
    // All 21 were delivered to c1: one in hand, twenty pulled and waiting behind it.
    await eventually(async () => expect((await consumerInfo()).num_ack_pending).toBe(21));

    c1.child.kill('SIGTERM');
    await eventually(async () => expect((await fetch(`${c1.healthUrl}/readyz`)).status).toBe(503), 5000, 20);
    expect(c1.child.exitCode).toBeNull();
    await lock.release();
    expect(await c1.exited).toEqual({ code: 0, signal: null });

    // Nothing left for another replica: c1 applied all of them before exiting, each once.
    const info = await consumerInfo();
    expect({ pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered }).toEqual({
      pending: 0,
      ackPending: 0,
      redelivered: 0,
    });
    expect(await granted(ids)).toEqual(ids.map(() => 2));
  });

  it('a message in hand of a replica killed without warning is redelivered to another replica and applied once', async () => {
    const c2 = await replica('collections#2');
    const deliveredBefore = (await consumerInfo()).delivered.consumer_seq;
    const id = randomUUID();
    const lock = await holdMessage(id);
    await publishGrant(id);
    await waitForLockWaiters(stack.env.DATABASE_URL!);
    c2.child.kill('SIGKILL');
    await c2.exited;
    await lock.release();
    expect((await consumerInfo()).num_ack_pending).toBe(1);
    // The killed replica's statement may still finish in its orphaned backend once the lock goes
    // (it is one atomic statement): all of the grant or none of it, never a part, and never acked.
    expect([[], [2]]).toContainEqual(await granted([id]));

    await replica('collections#3');
    // JetStream redelivers after the consumer's ack wait (ACK_WAIT_MS, 4 s); shortened here to keep the test short.
    await (await stack.nc.jetstreamManager()).consumers.update(grantsStream(prefix()), streamName(prefix(), DURABLE), { ack_wait: 1e9 });
    // Delivered twice (to the killed replica, then again) and acknowledged; applied once.
    await eventually(async () => {
      const info = await consumerInfo();
      expect({ ackPending: info.num_ack_pending, deliveries: info.delivered.consumer_seq - deliveredBefore }).toEqual({
        ackPending: 0,
        deliveries: 2,
      });
    }, 15_000);
    expect(await granted([id])).toEqual([2]);
  });
});
