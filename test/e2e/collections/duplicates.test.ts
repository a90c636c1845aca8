import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpeningConversions } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import {
  coinRules,
  createDupesApp,
  dupesContent,
  dupesGrant,
  duplicatesTruth,
  loadVersion,
  publishGrants,
  slotReference,
  sql,
} from '../../duplicates/support.js';

/**
 * Collections' duplicate step (docs/content.md, "Duplicates"): which granted items are past
 * max_copies, by the rules of the grant's content version; the conversions stored with the items,
 * carried by the applied notice, credited once through the outbox.
 */
describe('duplicate conversion when collections applies a grant', () => {
  let stack: TestStack;
  let app: { appId: string; key: string };

  beforeAll(async () => {
    stack = await startStack();
    // Version 1: keep 3, coins by rarity.
    app = await createDupesApp(stack, dupesContent(coinRules(3)));
  });
  afterAll(async () => stack?.close());

  it('keeps max_copies copies and converts the rest, counting earlier items of the same opening, each slot credited once', async () => {
    const player = randomUUID();
    const a = dupesGrant(app.appId, player, ['common', 'common', 'common', 'rare', 'common', 'common'], 1);
    const notices = await publishGrants(stack, [a]);
    expect(notices.get(a.openingId)).toEqual({
      converted: [
        { slot: 4, currency: 'coins', amount: 20 },
        { slot: 5, currency: 'coins', amount: 20 },
      ],
    });
    // A later opening: the common is already held 3 times, the rare once.
    const b = dupesGrant(app.appId, player, ['common', 'rare', 'legendary'], 1);
    expect((await publishGrants(stack, [b])).get(b.openingId)).toEqual({ converted: [{ slot: 0, currency: 'coins', amount: 20 }] });

    // The truth is read in parallel queries: wait until the last credit shows in all of them.
    const truth = await eventually(async () => {
      const t = await duplicatesTruth(stack, app.appId, player);
      expect(t.ledger).toHaveLength(3);
      expect(t.coins).toEqual({ balance: '60.00', sum: '60.00' });
      return t;
    });
    expect(truth.tallies).toEqual([
      { collectible_id: 'dupe-common', copies: 3, kept: 3 },
      { collectible_id: 'dupe-legendary', copies: 1, kept: 1 },
      { collectible_id: 'dupe-rare', copies: 2, kept: 2 },
    ]);
    expect(truth.ledger.map((l) => l.reference).sort()).toEqual(
      [slotReference(a.openingId, 4), slotReference(a.openingId, 5), slotReference(b.openingId, 0)].sort(),
    );
    expect(truth.ledger.every((l) => l.delta === '20.00')).toBe(true);
    expect(truth.coins).toEqual({ balance: '60.00', sum: '60.00' });
  });

  it('judges the openings of one batch in order, and answers a re-delivered grant with what it converted then', async () => {
    const player = randomUUID();
    const grants = Array.from({ length: 4 }, () => dupesGrant(app.appId, player, ['rare', 'rare'], 1));
    const notices = await publishGrants(stack, grants);
    const converted = grants.map((g) => (notices.get(g.openingId) as { converted: unknown[] }).converted.length);
    expect(converted.reduce((n, c) => n + c, 0)).toBe(5);
    // The same grants again under other message ids (a re-publish the stream cannot recognise).
    const again = await publishGrants(stack, grants, { msgId: (g) => `again-${g.openingId}` });
    for (const g of grants) expect(again.get(g.openingId)).toEqual(notices.get(g.openingId));
    await new Promise((r) => setTimeout(r, 500));
    const truth = await duplicatesTruth(stack, app.appId, player);
    expect(truth.tallies).toEqual([{ collectible_id: 'dupe-rare', copies: 3, kept: 3 }]);
    expect(truth.slots).toHaveLength(5);
    await eventually(async () => expect((await duplicatesTruth(stack, app.appId, player)).ledger).toHaveLength(5));
    expect((await duplicatesTruth(stack, app.appId, player)).coins).toEqual({ balance: '300.00', sum: '300.00' });
  });

  it('answers the conversions of applied openings, and nothing for openings it has not applied', async () => {
    const player = randomUUID();
    const g = dupesGrant(app.appId, player, ['legendary', 'legendary', 'legendary', 'legendary'], 1);
    const none = dupesGrant(app.appId, player, ['common'], 1);
    await publishGrants(stack, [g, none]);
    const unknown = randomUUID();
    const r = await stack.bus.request(
      OpeningConversions,
      { openingIds: [g.openingId, none.openingId, unknown] },
      { requestId: randomUUID(), appId: app.appId },
    );
    expect(new Map(r.openings.map((o) => [o.openingId, o.converted]))).toEqual(
      new Map([
        [g.openingId, [{ slot: 3, currency: 'coins', amount: 250 }]],
        [none.openingId, []],
      ]),
    );
    // Another app sees nothing of them.
    const other = await stack.bus.request(OpeningConversions, { openingIds: [g.openingId] }, { requestId: randomUUID(), appId: randomUUID() });
    expect(other.openings).toEqual([]);
  });

  it("judges each grant by its own content version's rules, the current one when it names none, and waits for a version not here yet", async () => {
    const other = await createDupesApp(stack, dupesContent(coinRules(3)));
    // Version 2: keep 1; a legendary converts into nothing.
    expect(await loadVersion(stack, other.appId, dupesContent(coinRules(1, { common: 5, rare: 15 })))).toBe(2);
    await eventually(async () => {
      const [row] = await sql<{ n: number }>(stack, 'SELECT count(*)::int AS n FROM collections.duplicate_rules WHERE app_id = $1', [other.appId]);
      expect(row!.n).toBe(2);
    });
    const player = randomUUID();
    const v1 = dupesGrant(other.appId, player, ['common', 'common', 'common'], 1);
    const v2 = dupesGrant(other.appId, player, ['rare', 'rare', 'legendary', 'legendary'], 2);
    const current = dupesGrant(other.appId, player, ['common'], undefined);
    const n = await publishGrants(stack, [v1, v2, current]);
    expect(n.get(v1.openingId)).toEqual({ converted: [] });
    expect(n.get(v2.openingId)).toEqual({
      converted: [
        { slot: 1, currency: 'coins', amount: 15 },
        { slot: 3, currency: 'coins', amount: 0 },
      ],
    });
    expect(n.get(current.openingId)).toEqual({ converted: [{ slot: 0, currency: 'coins', amount: 5 }] });

    // Version 3 is not loaded yet: its grant is retried, nothing stored, until it is.
    const v3 = dupesGrant(other.appId, player, ['rare'], 3);
    expect((await publishGrants(stack, [v3], { waitMs: 1500 })).get(v3.openingId)).toBeUndefined();
    expect(await sql(stack, 'SELECT 1 FROM collections.owned_collectibles WHERE opening_id = $1', [v3.openingId])).toHaveLength(0);
    expect(await loadVersion(stack, other.appId, dupesContent(undefined))).toBe(3);
    await eventually(
      async () =>
        expect(await sql(stack, 'SELECT converted_currency FROM collections.owned_collectibles WHERE opening_id = $1', [v3.openingId])).toEqual([
          { converted_currency: null },
        ]),
      30_000,
    );

    const truth = await eventually(async () => {
      const t = await duplicatesTruth(stack, other.appId, player);
      expect(t.ledger).toHaveLength(2);
      return t;
    });
    // Version 3 has no rules: the rare is kept past the earlier limit.
    expect(truth.tallies).toEqual([
      { collectible_id: 'dupe-common', copies: 3, kept: 3 },
      { collectible_id: 'dupe-legendary', copies: 1, kept: 1 },
      { collectible_id: 'dupe-rare', copies: 2, kept: 2 },
    ]);
    // The legendary converted into nothing has no ledger row and no credit.
    expect(truth.ledger.map((l) => [l.reference, l.delta]).sort()).toEqual(
      [
        [slotReference(v2.openingId, 1), '15.00'],
        [slotReference(current.openingId, 0), '5.00'],
      ].sort(),
    );
    expect(truth.coins).toEqual({ balance: '20.00', sum: '20.00' });
  });

  it("shows a player's copies of a collectible as meta.copies_owned", async () => {
    const reg = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/register',
      headers: jsonApiHeaders(app.key),
      payload: {
        data: {
          type: 'player',
          attributes: { email: `d-${randomUUID()}@example.com`, password: 'Str0ng!pass', password_confirmation: 'Str0ng!pass' },
          relationships: {},
        },
      },
    });
    expect(reg.statusCode, reg.body).toBe(201);
    const { id } = reg.json().data;
    const token = reg.json().meta.access_token;
    await publishGrants(stack, [dupesGrant(app.appId, id, ['rare', 'rare', 'rare', 'rare', 'rare'], 1)]);
    const res = await stack.inject({ method: 'GET', url: '/api/v1/collectibles/dupe-rare', headers: jsonApiHeaders(app.key, token) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().meta).toMatchObject({ copies_owned: 3, owned_count: 3 });
    const anonymous = await stack.inject({ method: 'GET', url: '/api/v1/collectibles/dupe-rare', headers: jsonApiHeaders(app.key) });
    expect(anonymous.json().meta.copies_owned).toBeUndefined();
  });
});
