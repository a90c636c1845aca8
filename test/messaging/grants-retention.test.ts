import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgedByAll, createLogger, encodeJson, ensureGrantsStream, GrantsJanitor, grantsStream, OpeningGranted } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { appIdOf, collectionsDb, openingGrant, registerPlayer, waitForContent } from '../e2e/collections/support.js';

const log = createLogger('test', 'silent');

describe('grants stream retention', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack();
    await waitForContent(stack);
  });
  afterAll(async () => stack?.close());

  const stream = () => grantsStream(stack.env.NATS_PREFIX!);

  it('has no age limit, and a stream made with one is changed to none at start', async () => {
    const jsm = await stack.nc.jetstreamManager();
    expect((await jsm.streams.info(stream())).config.max_age).toBe(0);
    const info = await jsm.streams.info(stream());
    await jsm.streams.update(stream(), { ...info.config, max_age: 7 * 24 * 3600 * 1e9 });
    await ensureGrantsStream(jsm, stack.env.NATS_PREFIX!);
    expect((await jsm.streams.info(stream())).config.max_age).toBe(0);
  });

  it('keeps every grant a consumer has not acknowledged, however old, and removes what all acknowledged', async () => {
    const jsm = await stack.nc.jetstreamManager();
    const js = stack.nc.jetstream();
    const janitor = new GrantsJanitor(jsm, stack.env.NATS_PREFIX!, 0, log);
    const appId = await appIdOf(stack);
    const player = await registerPlayer(stack);
    // Collections is down (an outage longer than any age limit would be): its grants wait.
    await stack.stopService('collections');
    const grants = Array.from({ length: 5 }, () => openingGrant(appId, player.id, [{ collectibleId: 'sea-octopus', collectionId: 'sea-creatures' }]));
    const seqs: number[] = [];
    for (const g of grants)
      seqs.push((await js.publish(`${stack.env.NATS_PREFIX}.${OpeningGranted.subject}`, encodeJson(g), { msgID: g.openingId })).seq);
    // Players' experience consumer acknowledges them; collections' cannot while it is down.
    await eventually(async () => expect(await acknowledgedByAll(jsm, stream())).toBeLessThan(seqs[0]!));
    await janitor.sweep();
    for (const seq of seqs) expect((await jsm.streams.getMessage(stream(), { seq })).seq).toBe(seq);

    await stack.startService('collections');
    const db = await collectionsDb(stack);
    try {
      await eventually(async () => {
        const r = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM owned_collectibles WHERE opening_id = ANY($1::uuid[])', [
          grants.map((g) => g.openingId),
        ]);
        expect(r.rows[0]!.n).toBe(5);
      }, 20_000);
    } finally {
      await db.end();
    }
    await eventually(async () => expect(await acknowledgedByAll(jsm, stream())).toBeGreaterThanOrEqual(seqs.at(-1)!));
    expect(await janitor.sweep()).toBeGreaterThanOrEqual(5);
    const state = (await jsm.streams.info(stream())).state;
    expect(state.first_seq).toBeGreaterThan(seqs.at(-1)!);
  });

  it('keeps acknowledged grants for the configured time', async () => {
    const jsm = await stack.nc.jetstreamManager();
    const before = (await jsm.streams.info(stream())).state.messages;
    const appId = await appIdOf(stack);
    const player = await registerPlayer(stack);
    const g = openingGrant(appId, player.id, [{ collectibleId: 'sea-octopus', collectionId: 'sea-creatures' }]);
    await stack.nc.jetstream().publish(`${stack.env.NATS_PREFIX}.${OpeningGranted.subject}`, encodeJson(g), { msgID: g.openingId });
    await eventually(async () => expect((await jsm.streams.info(stream())).state.last_seq).toBe(await acknowledgedByAll(jsm, stream())));
    expect(await new GrantsJanitor(jsm, stack.env.NATS_PREFIX!, 3_600_000, log).sweep()).toBe(0);
    expect((await jsm.streams.info(stream())).state.messages).toBeGreaterThan(before);
  });
});
