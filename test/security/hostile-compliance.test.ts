import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, readContentFile, type AppContent } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { expectError as expectJsonApiError, expectJsonApi } from '../support/jsonapi-schema.js';
import { grantCurrency } from '../support/grant-currency.js';
import { call, newPlayer, ok, snapshot, type Player } from './support/tenants.js';

// Hostile players get nothing (docs/design.md §6, "Every paid path to a random item is gated", "A declared
// profile cannot be gamed", and the last sentences of "Costly studio work is bounded"): a player
// in a blocked region or under age spends no paid currency on random content by any path
// (purchase, paid key, paid timer skip, batch), cannot declare their way out, and concurrent skips
// of one chest debit once. All through the gateway, against the real services.

let stack: TestStack;
/** P: the demo content, but its key currency (vault_key) is paid too. */
let P: { appId: string; key: string; secretKey: string };
/** Catalog ids of app P and of the demo app, by chest name. */
let idsP: Record<string, string>;
let idsDemo: Record<string, string>;
const THIS_YEAR = new Date().getUTCFullYear();

/** The demo content with `vault_key` a paid currency (a key bought with real money). */
function paidKeys(): AppContent {
  const c = readContentFile();
  return { ...c, compliance: { ...c.compliance!, paid_currencies: ['gems', 'vault_key'] } };
}

const catalogIds = async (key: string): Promise<Record<string, string>> =>
  Object.fromEntries(
    ok(await call(stack, 'GET', '/api/v1/chests?page[limit]=100', { key })).data.map((c: { id: string; attributes: { name: string } }) => [
      c.attributes.name,
      c.id,
    ]),
  );

/** A player of the app of `key`, who declared `declared` (their first declaration: free). */
async function declaring(key: string, declared: { country?: string; birth_year?: number }): Promise<Player> {
  const p = await newPlayer(stack, key);
  if (Object.keys(declared).length) ok(await patchMe(p, declared));
  return p;
}
const patchMe = (p: Player, attributes: Record<string, unknown>) =>
  call(stack, 'PATCH', '/api/v1/players/me', p, { payload: { data: { type: 'player', attributes } } });
const appIdOfKey = (key: string) => (key === P.key ? P.appId : demoAppId);
let demoAppId: string;

/** Buys a chest with coins (never gated) and returns the new inventory chest's id. */
async function buyWithCoins(p: Player, chestTypeId: string): Promise<string> {
  const res = await call(stack, 'POST', `/api/v1/chests/${chestTypeId}/purchase`, p, {
    payload: { data: { type: 'purchase', attributes: { currency: 'coins' } } },
  });
  return ok(res, 201).data[0].id;
}

/** A player with a Vault Chest, an Hourglass Chest, and keys and gems granted by the studio. */
async function equipped(key: string, declared: { country?: string; birth_year?: number }) {
  const p = await declaring(key, declared);
  const appId = appIdOfKey(key);
  await grantCurrency(stack, appId, p.id, 'coins', '5000');
  await grantCurrency(stack, appId, p.id, 'gems', '500');
  await grantCurrency(stack, appId, p.id, 'vault_key', '3');
  const ids = key === P.key ? idsP : idsDemo;
  const vault = await buyWithCoins(p, ids['Vault Chest']!);
  const hourglass = await buyWithCoins(p, ids['Hourglass Chest']!);
  return { p, vault, hourglass, ids };
}

/** Ledger rows and chest debits of a player: what a refused paid path must not add. */
const moneyTrail = async (playerId: string) => ({
  ledger: (
    await stack.services.wallet!.deps.pool.query('SELECT id::text, delta::text, reason FROM ledger WHERE player_id = $1 ORDER BY id', [playerId])
  ).rows,
  debits: (
    await stack.services.chests!.deps.pool.query("SELECT id::text, status FROM payments WHERE kind IN ('key', 'skip') AND player_id = $1", [playerId])
  ).rows,
});

const open = (p: Player, chestId: string, method: 'GET' | 'POST' = 'GET') => call(stack, method, `/api/v1/chests/${chestId}/open`, p);
const skip = (p: Player, chestId: string, currency = 'gems') =>
  call(stack, 'POST', `/api/v1/chests/${chestId}/unlock`, p, { payload: { data: { type: 'unlock', attributes: { skip_with: currency } } } });
const batch = (p: Player, chestIds: string[]) =>
  call(stack, 'POST', '/api/v1/chests/open', p, { payload: { data: chestIds.map((id) => ({ type: 'chest', id })) } });
const purchase = (p: Player, chestTypeId: string, currency: string) =>
  call(stack, 'POST', `/api/v1/chests/${chestTypeId}/purchase`, p, { payload: { data: { type: 'purchase', attributes: { currency } } } });

beforeAll(async () => {
  stack = await startStack();
  const created = await stack.bus.request(
    AdminCreateApp,
    { name: 'Paid keys', content: paidKeys() },
    { requestId: `sec-${randomBytes(4).toString('hex')}` },
  );
  P = { appId: created.appId, key: created.publishableKey, secretKey: created.secretKey };
  await eventually(async () => expect(Object.keys(await catalogIds(P.key))).toContain('Vault Chest'), 20_000);
  idsP = await catalogIds(P.key);
  idsDemo = await catalogIds(stack.apiKey);
  const probe = await newPlayer(stack, stack.apiKey, true);
  demoAppId = JSON.parse(Buffer.from(probe.token.split('.')[1]!, 'base64url').toString()).app as string;
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

describe('every paid path to random content is gated', () => {
  for (const [who, declared, code] of [
    ['a player in a blocked region', { country: 'BE', birth_year: 1990 }, 'blocked_in_region'],
    ['a minor', { country: 'DE', birth_year: THIS_YEAR - 12 }, 'age_restricted'],
    ['a player who declared nothing', {}, 'blocked_in_region'],
  ] as const) {
    it(`refuses ${who} with 403 ${code} on a purchase, a paid key, a paid skip and a batch with a paid key chest; nothing changes`, async () => {
      const { p, vault, hourglass, ids } = await equipped(P.key, declared);
      const before = await snapshot(stack, p);
      const trail = await moneyTrail(p.id);

      expectJsonApiError(await purchase(p, ids['Silver Chest']!, 'gems'), 403, code);
      expectJsonApiError(await open(p, vault), 403, code);
      expectJsonApiError(await open(p, vault, 'POST'), 403, code);
      expectJsonApiError(await skip(p, hourglass), 403, code);
      const [refused] = expectJsonApiError(await batch(p, [p.starterChest, vault]), 403, code);
      expect(refused!.source).toEqual({ pointer: '/data/1/id' });

      // Balances, chests, openings and the money trail are exactly as before.
      expect(await snapshot(stack, p)).toEqual(before);
      expect(await moneyTrail(p.id)).toEqual(trail);
      const inv = ok(await call(stack, 'GET', '/api/v1/players/me/chests', p)).data as { id: string; meta: { lock?: { state: string } } }[];
      expect(inv.map((c) => c.id)).toEqual(expect.arrayContaining([vault, hourglass, p.starterChest]));
      expect(inv.find((c) => c.id === hourglass)!.meta.lock!.state).toBe('locked');

      // Free paths stay open: coins buy, the starter chest opens, the timer starts for free.
      ok(await purchase(p, ids['Wooden Chest']!, 'coins'), 201);
      ok(await open(p, p.starterChest));
      expect(ok(await call(stack, 'POST', `/api/v1/chests/${hourglass}/unlock`, p)).data.meta.lock.state).toBe('unlocking');
    });
  }

  it('lets an allowed player take every paid path, a batch with a paid key chest included', async () => {
    const { p, vault, hourglass, ids } = await equipped(P.key, { country: 'DE', birth_year: 1990 });
    ok(await purchase(p, ids['Silver Chest']!, 'gems'), 201);
    const skipped = ok(await skip(p, hourglass));
    expect(skipped.meta.price_paid).toEqual({ gems: 60 });
    expect(ok(await open(p, vault)).data.chest_id).toBe(vault);
    ok(await open(p, hourglass));
    // A batch may hold a paid key chest: its key is debited with the others' openings.
    const another = await buyWithCoins(p, ids['Vault Chest']!);
    const opened = ok(await batch(p, [p.starterChest, another])).data as { chest_id: string }[];
    expect(opened.map((d) => d.chest_id)).toEqual([p.starterChest, another]);
    const keys = ok(await call(stack, 'GET', '/api/v1/currencies', p)).data.find(
      (c: { attributes: { code: string } }) => c.attributes.code === 'vault_key',
    );
    expect(keys.attributes.balance.amount).toBe('1.00');
  });

  it('does not gate a free key currency: a player in a blocked region opens the demo Vault Chest with a free vault_key', async () => {
    const { p, vault } = await equipped(stack.apiKey, { country: 'BE', birth_year: 1990 });
    expect(ok(await open(p, vault)).data.chest_id).toBe(vault);
    const keys = ok(await call(stack, 'GET', '/api/v1/currencies', p)).data.find(
      (c: { attributes: { code: string } }) => c.attributes.code === 'vault_key',
    );
    expect(keys.attributes.balance.amount).toBe('2.00');
  });

  it('tells the caller in the catalog where each applies: purchasable, requires_key.allowed, unlock.skip_allowed', async () => {
    const blocked = await declaring(P.key, { country: 'NL', birth_year: 1990 });
    const allowed = await declaring(P.key, { country: 'FR', birth_year: 1990 });
    const metaOf = async (caller: { key: string; token?: string }) => {
      const res = await call(stack, 'GET', '/api/v1/chests?page[limit]=100', caller);
      const body = ok(res);
      expectJsonApi(body);
      return Object.fromEntries(body.data.map((c: { attributes: { name: string }; meta: unknown }) => [c.attributes.name, c.meta])) as Record<
        string,
        { purchasable?: Record<string, boolean>; requires_key?: { allowed?: boolean }; unlock?: { skip_allowed?: boolean } }
      >;
    };
    const b = await metaOf(blocked);
    expect(b['Silver Chest']!.purchasable).toEqual({ coins: true, gems: false });
    expect(b['Vault Chest']!.requires_key).toEqual({ currency: 'vault_key', amount: 1, allowed: false });
    expect(b['Hourglass Chest']!.unlock!.skip_allowed).toBe(false);
    const a = await metaOf(allowed);
    expect(a['Silver Chest']!.purchasable).toEqual({ coins: true, gems: true });
    expect(a['Vault Chest']!.requires_key!.allowed).toBe(true);
    expect(a['Hourglass Chest']!.unlock!.skip_allowed).toBe(true);
    const anonymous = await metaOf({ key: P.key });
    expect(anonymous['Silver Chest']!.purchasable).toBeUndefined();
    expect(anonymous['Vault Chest']!.requires_key).toEqual({ currency: 'vault_key', amount: 1 });
    expect(anonymous['Hourglass Chest']!.unlock!.skip_allowed).toBeUndefined();
    // The single chest says the same.
    const one = ok(await call(stack, 'GET', `/api/v1/chests/${idsP['Vault Chest']}`, blocked));
    expect(one.data.meta.requires_key.allowed).toBe(false);
  });
});

describe('a declared profile cannot be gamed', () => {
  it('locks a country declared in a blocked region: BE → DE is 403 country_locked, and the gate still refuses', async () => {
    const { p, vault } = await equipped(P.key, { country: 'BE', birth_year: 1990 });
    const [locked] = expectJsonApiError(await patchMe(p, { country: 'DE' }), 403, 'country_locked');
    expect(locked!.source).toEqual({ pointer: '/data/attributes/country' });
    expect(ok(await call(stack, 'GET', '/api/v1/players/me', p)).data.attributes.country).toBe('BE');
    expectJsonApiError(await open(p, vault), 403, 'blocked_in_region');
  });

  it('lets another country change once per cooldown: DE → FR, then FR → IT is 403 country_change_too_soon with meta.retry_after', async () => {
    const p = await declaring(stack.apiKey, { country: 'DE' });
    ok(await patchMe(p, { country: 'FR' }));
    const res = await patchMe(p, { country: 'IT' });
    const [soon] = expectJsonApiError(res, 403, 'country_change_too_soon');
    const retryAfter = Date.parse((soon as unknown as { meta: { retry_after: string } }).meta.retry_after);
    expect(retryAfter - Date.now()).toBeGreaterThan(29.9 * 86_400_000);
    expect(retryAfter - Date.now()).toBeLessThanOrEqual(30 * 86_400_000);
    expect(ok(await call(stack, 'GET', '/api/v1/players/me', p)).data.attributes.country).toBe('FR');
  });

  it('moves a birth year only later: earlier is 403 birth_year_locked (the age gate still refuses), later is allowed', async () => {
    const { p, hourglass } = await equipped(P.key, { country: 'DE', birth_year: THIS_YEAR - 15 });
    expectJsonApiError(await patchMe(p, { birth_year: 1980 }), 403, 'birth_year_locked');
    expectJsonApiError(await skip(p, hourglass), 403, 'age_restricted');
    expect(ok(await patchMe(p, { birth_year: THIS_YEAR - 14 })).data.attributes.birth_year).toBe(THIS_YEAR - 14);
  });

  it('lets the studio correct it with PATCH /api/v1/admin/players/{id} (secret key), recorded in the audit log', async () => {
    const { p, vault } = await equipped(P.key, { country: 'BE', birth_year: 1990 });
    const studio = { key: P.secretKey };
    const patch = (key: string, playerId: string, attributes: Record<string, unknown>) =>
      call(stack, 'PATCH', `/api/v1/admin/players/${playerId}`, { key }, { payload: { data: { type: 'player', attributes } } });

    // Only the secret key of the player's own app.
    expectJsonApiError(await patch(P.key, p.id, { country: 'DE' }), 403, 'secret_key_required');
    const demoPlayer = await declaring(stack.apiKey, { country: 'BE' });
    expectJsonApiError(await patch(P.secretKey, demoPlayer.id, { country: 'DE' }), 404, 'player_not_found');
    expectJsonApiError(await patch(P.secretKey, p.id, { country: 'QQ' }), 422, 'country_invalid');
    expect(ok(await call(stack, 'GET', '/api/v1/players/me', demoPlayer)).data.attributes.country).toBe('BE');

    const corrected = ok(await patch(P.secretKey, p.id.toUpperCase(), { country: 'de', birth_year: 1991 }));
    expectJsonApi(corrected);
    expect(corrected.data).toEqual({
      type: 'player',
      id: p.id,
      attributes: { country: 'DE', birth_year: 1991, country_changed_at: null },
      links: { self: expect.stringMatching(new RegExp(`/api/v1/admin/players/${p.id}$`)) },
    });
    // The gate reads it at once: the paid key opens now.
    expect(ok(await open(p, vault)).data.chest_id).toBe(vault);

    await eventually(async () => {
      const audit = ok(await call(stack, 'GET', '/api/v1/admin/audit?page[limit]=50', studio)).data as {
        attributes: { action: string; target: string | null; status: number };
      }[];
      const entries = audit.filter((e) => e.attributes.action === 'PATCH /api/v1/admin/players/{id}');
      // The publishable key's refusal too (403): every action is recorded, whoever tried it.
      expect(entries.map((e) => e.attributes.status).sort()).toEqual([200, 403, 404, 422]);
      expect(entries.find((e) => e.attributes.status === 200)!.attributes.target!.toLowerCase()).toBe(p.id);
    }, 10_000);
  });
});

describe('identifiers compare case-insensitively', () => {
  it('opens a batch naming an owned chest in upper case, as a single open does; the same chest in both cases is listed twice', async () => {
    const p = await declaring(stack.apiKey, {});
    const [a, b] = [await buyWithCoins(p, idsDemo['Wooden Chest']!), await buyWithCoins(p, idsDemo['Wooden Chest']!)];
    expectJsonApiError(await batch(p, [a!, a!.toUpperCase()]), 422, 'duplicate_chest');
    const opened = ok(await batch(p, [a!.toUpperCase(), b!]));
    expect(opened.data.map((o: { chest_id: string }) => o.chest_id)).toEqual([a, b]);
    expect(ok(await open(p, p.starterChest.toUpperCase())).data.chest_id).toBe(p.starterChest);
    // The catalog filter on ids too.
    const found = ok(await call(stack, 'GET', `/api/v1/chests?filter[id]=${idsDemo['Silver Chest']!.toUpperCase()}`, { key: stack.apiKey }));
    expect(found.data.map((c: { id: string }) => c.id)).toEqual([idsDemo['Silver Chest']]);
  });
});

describe('concurrent timer skips of one chest debit once', () => {
  it('answers ten concurrent skips with one charge: one debit in the ledger, one completed chest debit', async () => {
    const { p, hourglass } = await equipped(stack.apiKey, { country: 'DE', birth_year: 1990 });
    const before = (await moneyTrail(p.id)).ledger.length;
    const answers = await Promise.all(Array.from({ length: 10 }, () => skip(p, hourglass)));
    for (const res of answers) expect(res.statusCode, res.body).toBe(200);
    expect(answers.filter((r) => r.json().meta.price_paid).map((r) => r.json().meta.price_paid)).toEqual([{ gems: 60 }]);
    for (const res of answers) expect(res.json().data.meta.lock.state).toBe('unlocked');
    const trail = await moneyTrail(p.id);
    const skips = trail.ledger.slice(before);
    expect(skips.map((r: { delta: string }) => r.delta)).toEqual(['-60.00']);
    expect(trail.debits.filter((d: { status: string }) => d.status !== 'refunded').map((d: { status: string }) => d.status)).toEqual(['completed']);
    expect(trail.debits).toHaveLength(1);
    ok(await open(p, hourglass));
  });
});
