import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsStream, healthSubject, streamName } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { registerThroughGateway, type RegisteredPlayer } from '../support/register.js';
import { coinRules, createDupesApp, dupesContent, expectConvertedOnce, grantChests, openChest, sql, waitForChests } from './support.js';
import { conversionCreditId } from '../../services/collections/src/duplicates/credit.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Initial coins plus the welcome bonus of the demo's player rules. */
const START_COINS = 1500;
const MAX = 2;
const ITEMS = 3;

/**
 * Duplicate conversion is a saga step between collections and wallet: stop or kill either one
 * between the steps, and after it is back nothing is lost or doubled (copies at most max_copies,
 * one ledger row per converted slot, balance = ledger sum). A pool of one collectible, max 2, three
 * items per chest: from the first opening on, every item past the second is converted (20 coins).
 */
describe('duplicate conversion across failures', () => {
  let stack: TestStack;
  let app: { appId: string; key: string };

  beforeAll(async () => {
    stack = await startStack({ env: { GRANT_WAIT_MS: '1000', NATS_REQUEST_TIMEOUT_MS: '4000' } });
    app = await createDupesApp(stack, dupesContent(coinRules(MAX), { pool: ['dupe-common'], items: ITEMS }));
  });
  afterAll(async () => stack?.close());

  async function playerWithChests(n: number): Promise<{ p: RegisteredPlayer; chests: string[] }> {
    const p = await registerThroughGateway(stack, app.key);
    const chests = [p.starterChestId, ...(await grantChests(stack, app.appId, p.id, n - 1))];
    await waitForChests(stack, app.key, p.token, chests);
    return { p, chests };
  }
  const openAll = async (p: RegisteredPlayer, chests: string[]) => {
    const answers = await Promise.all(chests.map((id) => openChest(stack, app.key, p.token, id)));
    for (const a of answers) expect(a.statusCode, a.body).toBe(200);
    return answers.map((a) => a.json());
  };
  const settled = (p: RegisteredPlayer, chests: number) =>
    eventually(() => expectConvertedOnce(stack, app.appId, p.id, { maxCopies: MAX, items: chests * ITEMS, startCoins: START_COINS }), 30_000, 250);

  it('converts and credits every duplicate exactly once when collections was down while the chests were opened', async () => {
    const { p, chests } = await playerWithChests(8);
    await stack.stopService('collections');
    try {
      for (const body of await openAll(p, chests)) {
        expect(body.meta.message).toMatch(/on their way/);
        expect(body.meta.conversions).toBeUndefined();
      }
    } finally {
      await stack.startService('collections');
    }
    const truth = await settled(p, 8);
    expect(truth.slots).toHaveLength(8 * ITEMS - MAX);
  });

  it('credits the conversions exactly once when the wallet was down between collections and the credit', async () => {
    const { p, chests } = await playerWithChests(5);
    await stack.stopService('wallet');
    let answers;
    try {
      answers = await openAll(p, chests);
      // Collections decided: the answers show the conversions; the credits wait in the stream.
      const converted = answers.reduce((n, a) => n + (a.meta.conversions?.coins ?? 0), 0);
      expect(converted).toBe((5 * ITEMS - MAX) * 20);
      expect(await sql(stack, `SELECT 1 FROM wallet.ledger WHERE player_id = $1 AND reason = 'duplicate_conversion'`, [p.id])).toHaveLength(0);
    } finally {
      await stack.startService('wallet');
    }
    await settled(p, 5);
  });

  it('publishes on restart the credits a collections process committed before it died, and applies its grant once', async () => {
    const { p, chests } = await playerWithChests(1);
    await stack.stopService('collections');
    let child: ChildProcess | undefined;
    try {
      child = spawn(
        process.execPath,
        ['--import', 'tsx', '--conditions=development', 'services/collections/test/support/exit-after-grant-commit.ts'],
        {
          cwd: ROOT,
          env: { ...process.env, ...stack.env },
          stdio: 'ignore',
        },
      );
      const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
      await eventually(() => stack.bus.request(healthSubject('collections'), {}, { requestId: randomUUID() }, { timeoutMs: 500 }), 30_000, 250);
      // The child commits the grant with its conversion and the credit, then dies before it
      // publishes the credit, acks the grant or tells chests: the answer does not know.
      const [body] = await openAll(p, [chests[0]!]);
      expect(body.meta.conversions).toBeUndefined();
      expect(await exited).toBe(87);
    } finally {
      if (child && child.exitCode === null) child.kill('SIGKILL');
    }
    const openingId: string = (await sql<{ id: string }>(stack, 'SELECT id FROM chests.openings WHERE chest_id = $1', [chests[0]]))[0]!.id;
    const creditId = conversionCreditId(openingId);
    expect(await sql(stack, 'SELECT published_at FROM collections.outbox WHERE id = $1', [creditId])).toEqual([{ published_at: null }]);
    expect(await sql(stack, 'SELECT converted_amount FROM collections.owned_collectibles WHERE opening_id = $1 ORDER BY slot', [openingId])).toEqual([
      { converted_amount: null },
      { converted_amount: null },
      { converted_amount: 20 },
    ]);

    // Back: the relay publishes the committed credit, the grant comes again and changes nothing.
    await stack.startService('collections');
    await settled(p, 1);
    await eventually(async () => {
      const [row] = await sql<{ published_at: Date | null }>(stack, 'SELECT published_at FROM collections.outbox WHERE id = $1', [creditId]);
      expect(row!.published_at).not.toBeNull();
    });
    // The grant was redelivered (never acked by the child) and judged nothing again.
    await eventually(async () => {
      const jsm = await stack.nc.jetstreamManager();
      const info = await jsm.consumers.info(grantsStream(stack.env.NATS_PREFIX!), streamName(stack.env.NATS_PREFIX!, 'collections-openings'));
      expect(info.num_ack_pending + info.num_pending).toBe(0);
    }, 20_000);

    // The relay publishes the credit again (a crash between publish and mark): nothing doubles.
    await sql(stack, 'UPDATE collections.outbox SET published_at = NULL WHERE id = $1', [creditId]);
    await eventually(async () => {
      const [row] = await sql<{ published_at: Date | null }>(stack, 'SELECT published_at FROM collections.outbox WHERE id = $1', [creditId]);
      expect(row!.published_at).not.toBeNull();
    });
    await new Promise((r) => setTimeout(r, 500));
    await expectConvertedOnce(stack, app.appId, p.id, { maxCopies: MAX, items: ITEMS, startCoins: START_COINS });
  });
});
