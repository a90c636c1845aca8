import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DebitCurrency, startService, type BaseConfig } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { expectError } from '../../../test/support/jsonapi-schema.js';
import { ChestsConfigSchema } from '../src/config.js';
import { chestsService } from '../src/service.js';
import { appIdOf, credit, defaultCatalogIds, get, grantChests, inventory, open, registerPlayer, sql, wallet, type Player } from './support/chests.js';

describe('key-required chests', () => {
  let stack: TestStack;
  let appId: string;
  beforeAll(async () => {
    // A crashed opening's key debit is stale after 500 ms, and the sweeper looks every 200 ms.
    stack = await startStack({ env: { PAYMENT_STALE_MS: '2000', PAYMENT_SWEEP_INTERVAL_MS: '200' } });
    appId = await appIdOf(stack);
  });
  afterAll(async () => stack?.close());

  /** A player with `n` Vault Chests and `keys` Vault Keys. */
  async function playerWithVaults(n: number, keys: number): Promise<{ player: Player; chests: string[] }> {
    const player = await registerPlayer(stack);
    await eventually(async () => expect((await inventory(stack, player)).meta.total_chests).toBe(1), 20_000);
    const chests = await grantChests(stack, player, 'vault-chest', n);
    if (keys > 0) await credit(stack, player, (await wallet(stack, player)).vault_key!.id, String(keys));
    return { player, chests };
  }
  const keysOf = async (p: Player) => Number((await wallet(stack, p)).vault_key!.balance);
  const openedCount = async (ids: string[]) =>
    (
      await sql<{ n: number }>(stack, 'SELECT count(*)::int AS n FROM chests.inventory_chests WHERE id = ANY($1::uuid[]) AND opened_at IS NOT NULL', [
        ids,
      ])
    )[0]!.n;

  it('shows the key in the catalog', async () => {
    const ids = await defaultCatalogIds(stack);
    const vault = (await get(stack, `/api/v1/chests/${ids['Vault Chest']}`)).json();
    expect(vault.data.meta.requires_key).toEqual({ currency: 'vault_key', amount: 1 });
    expect((await get(stack, `/api/v1/chests/${ids['Wooden Chest']}`)).json().data.meta.requires_key).toBeUndefined();
  });

  it('answers 409 key_required without a key, changing nothing; with one, debits it and opens the chest', async () => {
    const { player, chests } = await playerWithVaults(1, 0);
    const refused = expectError(await open(stack, player, chests[0]!), 409, 'key_required');
    expect((refused[0] as { meta?: unknown }).meta).toEqual({ currency: 'vault_key', amount: 1 });
    expect(await openedCount(chests)).toBe(0);
    expect(await keysOf(player)).toBe(0);

    await credit(stack, player, (await wallet(stack, player)).vault_key!.id, '1');
    const res = await open(stack, player, chests[0]!);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.collectibles).toHaveLength(4);
    expect(await keysOf(player)).toBe(0);
    const debits = await sql<{ status: string; id: string }>(
      stack,
      "SELECT id, status FROM chests.payments WHERE kind = 'key' AND chest_id = $1 ORDER BY created_at",
      [chests[0]],
    );
    // The refused key debited nothing: its payment failed.
    expect(debits.map((d) => d.status)).toEqual(['failed', 'completed']);
    const ledger = await sql<{ n: number }>(stack, 'SELECT count(*)::int AS n FROM wallet.ledger WHERE reference = $1', [`key:${debits[1]!.id}`]);
    expect(ledger[0]!.n).toBe(1);
  });

  it('lets exactly one of two concurrent opens share one key', async () => {
    const { player, chests } = await playerWithVaults(2, 1);
    const answers = await Promise.all(chests.map((id) => open(stack, player, id)));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expectError(
      answers.find((r) => r.statusCode === 409)!,
      409,
      'key_required',
    );
    expect(await openedCount(chests)).toBe(1);
    expect(await keysOf(player)).toBe(0);
  });

  it('refunds the key when the chest cannot be consumed: two replicas opening the same chest spend one key', async () => {
    const second = await startService(chestsService, ChestsConfigSchema.parse(stack.env) as BaseConfig);
    try {
      const { player, chests } = await playerWithVaults(1, 3);
      const answers = await Promise.all([1, 2, 3, 4].map(() => open(stack, player, chests[0]!)));
      expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(1);
      for (const r of answers.filter((x) => x.statusCode !== 200)) expectError(r, 403, 'chest_already_opened');
      await eventually(async () => expect(await keysOf(player)).toBe(2));
    } finally {
      await second.stop();
    }
  });

  it('settles a crash between the key debit and the opening: the sweeper refunds the key, or voids a debit that never happened', async () => {
    const { player, chests } = await playerWithVaults(1, 1);
    // A process debited the key (step 1 recorded, step 2 done) and died before opening the chest.
    const crashed = randomUUID();
    await sql(
      stack,
      "INSERT INTO chests.payments (id, kind, app_id, player_id, chest_id, currency, amount, status) VALUES ($1, 'key', $2, $3, $4, 'vault_key', 1, 'debited')",
      [crashed, appId, player.id, chests[0]],
    );
    await stack.bus.request(
      DebitCurrency,
      { playerId: player.id, currency: 'vault_key', amount: '1', reference: `key:${crashed}` },
      { requestId: 'test', appId, playerId: player.id },
    );
    expect(await keysOf(player)).toBe(0);
    // Another died before asking the wallet at all.
    const early = randomUUID();
    await sql(
      stack,
      "INSERT INTO chests.payments (id, kind, app_id, player_id, chest_id, currency, amount, status) VALUES ($1, 'key', $2, $3, $4, 'vault_key', 1, 'pending')",
      [early, appId, player.id, chests[0]],
    );
    await eventually(async () => {
      const rows = await sql<{ id: string; status: string }>(
        stack,
        "SELECT id, status FROM chests.payments WHERE kind = 'key' AND id = ANY($1::uuid[])",
        [[crashed, early]],
      );
      // The debited key went back; the debit that never happened ended failed, its reference voided.
      expect(Object.fromEntries(rows.map((r) => [r.id, r.status]))).toEqual({ [crashed]: 'refunded', [early]: 'failed' });
    }, 15_000);
    expect(await keysOf(player)).toBe(1);
    // The key is usable again, once.
    const res = await stack.inject({ method: 'POST', url: `/api/v1/chests/${chests[0]}/open`, headers: jsonApiHeaders(player.apiKey, player.token) });
    expect(res.statusCode, res.body).toBe(200);
    expect(await keysOf(player)).toBe(0);
  });

  it('opens key-required chests in a batch, one key each; short of a key, opens nothing, names the chest and refunds the keys taken', async () => {
    const { player, chests } = await playerWithVaults(2, 1);
    const all = [player.starterChestId, ...chests];
    const openAll = () =>
      stack.inject({
        method: 'POST',
        url: '/api/v1/chests/open',
        headers: jsonApiHeaders(player.apiKey, player.token),
        payload: { data: all.map((id) => ({ type: 'chest', id })) },
      });
    const [short] = expectError(await openAll(), 409, 'key_required');
    expect(short!.source).toEqual({ pointer: '/data/2/id' });
    expect((short as { meta?: unknown }).meta).toEqual({ currency: 'vault_key', amount: 1 });
    expect(await openedCount(all)).toBe(0);
    expect(await keysOf(player)).toBe(1);

    await credit(stack, player, (await wallet(stack, player)).vault_key!.id, '1');
    const res = await openAll();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.map((d: { chest_id: string }) => d.chest_id)).toEqual(all);
    expect(await openedCount(all)).toBe(3);
    expect(await keysOf(player)).toBe(0);
    const debits = await sql<{ chest_id: string; status: string }>(
      stack,
      "SELECT chest_id, status FROM chests.payments WHERE kind = 'key' AND chest_id = ANY($1::uuid[]) ORDER BY created_at",
      [chests],
    );
    // The short batch took the first key (refunded) and was refused the second (failed, nothing debited); the second batch took one each.
    expect(debits.filter((d) => d.status === 'completed').map((d) => d.chest_id)).toEqual(chests);
    expect(debits.filter((d) => d.status === 'refunded').map((d) => d.chest_id)).toEqual([chests[0]]);
    expect(debits.filter((d) => d.status === 'failed').map((d) => d.chest_id)).toEqual([chests[1]]);
  });
});
