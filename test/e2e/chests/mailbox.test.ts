import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headers as natsHeaders } from 'nats';
import { ChestGrant, readContentFile, type AppContent, chestTypeId } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { deleteExpiredItems } from '../../../services/chests/src/repositories/mailbox-repo.js';
import { MAILBOX_GRACE_DAYS } from '../../../services/chests/src/workers/mailbox-sweeper.js';
import {
  createApp,
  get,
  inventory,
  open,
  registerPlayer,
  sql,
  waitForStarterChest,
  type Player,
} from '../../../services/chests/test/support/chests.js';

const content = readContentFile();
const TTL_DAYS = 7;

/** The demo content with inventories of 2 chests and the given overflow rule. */
function tinyContent(overflow: 'mailbox' | 'refuse'): AppContent {
  const c: AppContent = structuredClone(content);
  c.players.inventory_capacity = 2;
  c.players.inventory_overflow = overflow;
  c.players.mailbox_ttl_days = TTL_DAYS;
  return c;
}

// The overflow mailbox through the gateway: the mailbox documents, their pages, a claim as rendered,
// expiry and the sweeper, and the gateway's refusals. Concurrent claims, purchases refused at
// capacity and the refuse rule are chests' own (services/chests/test/mailbox.test.ts, service tier).
describe('overflow mailbox', () => {
  let stack: TestStack;
  let mailboxApp: { appId: string; publishableKey: string };

  beforeAll(async () => {
    stack = await startStack();
    mailboxApp = await createApp(stack, tinyContent('mailbox'));
  });
  afterAll(async () => stack?.close());

  const publishGrant = async (payload: Parameters<typeof ChestGrant.payload.parse>[0], msgId = randomUUID()) => {
    const js = stack.nc.jetstream();
    await js.publish(`${stack.env.NATS_PREFIX}.${ChestGrant.subject}`, JSON.stringify(ChestGrant.payload.parse(payload)), {
      msgID: msgId,
      headers: natsHeaders(),
    });
  };
  /** A chest of `slug` granted to p (delivered `times` times, each with its own message id); its id. */
  const grant = async (app: { appId: string }, p: Player, opts: { id?: string; slug?: string; times?: number } = {}) => {
    const id = opts.id ?? randomUUID();
    const payload = { appId: app.appId, playerId: p.id, inventoryChestId: id, chestTypeId: opts.slug ?? 'golden-chest', source: 'special' as const };
    for (let i = 0; i < (opts.times ?? 1); i++) await publishGrant(payload);
    return id;
  };
  const newPlayer = async (app: { publishableKey: string }) => {
    const p = await registerPlayer(stack, app.publishableKey);
    await waitForStarterChest(stack, p);
    return p;
  };
  const mailbox = async (p: Player, query = '') => {
    const res = await get(stack, `/api/v1/players/me/mailbox${query}`, p.token, p.apiKey);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expectJsonApi(body);
    return body;
  };
  const claim = (p: Player, id: string) =>
    stack.inject({
      method: 'POST',
      url: `/api/v1/players/me/mailbox/${id}/claim`,
      headers: { apikey: p.apiKey, authorization: `Bearer ${p.token}`, accept: 'application/vnd.api+json' },
    });
  const ids = (doc: { data: { id: string }[] }) => doc.data.map((d) => d.id);
  const rowsWithId = async (id: string) => ({
    inventory: (await sql(stack, 'SELECT 1 FROM chests.inventory_chests WHERE id = $1', [id])).length,
    mailbox: (await sql(stack, 'SELECT 1 FROM chests.mailbox_items WHERE id = $1', [id])).length,
  });
  /** Waits for grants to land, then a little longer, so a duplicate delivery would have landed too. */
  const settle = async (check: () => Promise<void>) => {
    await eventually(check, 20_000);
    await new Promise((r) => setTimeout(r, 400));
    await check();
  };

  it('puts grants that do not fit in the mailbox, once each even when delivered twice, and lists them', async () => {
    const p = await newPlayer(mailboxApp);
    const fits = await grant(mailboxApp, p, { times: 2 });
    await settle(async () => expect((await inventory(stack, p)).meta.inventory_status).toEqual({ capacity: 2, used: 2, available: 0 }));
    const first = await grant(mailboxApp, p, { times: 2 });
    const second = await grant(mailboxApp, p, { slug: 'wooden-chest', times: 2 });
    await settle(async () => expect((await mailbox(p)).meta.total_count).toBe(2));

    expect((await inventory(stack, p)).meta.total_chests).toBe(2);
    for (const id of [fits]) expect(await rowsWithId(id)).toEqual({ inventory: 1, mailbox: 0 });
    for (const id of [first, second]) expect(await rowsWithId(id)).toEqual({ inventory: 0, mailbox: 1 });

    const body = await mailbox(p);
    expect(body.meta).toEqual({ total_count: 2, page: { limit: 20, offset: 0 }, inventory_status: { capacity: 2, used: 2, available: 0 } });
    expect(ids(body)).toEqual([first, second]);
    const golden = content.chests.find((c) => c.id === 'golden-chest')!;
    expect(body.data[0]).toEqual({
      type: 'mailbox_item',
      id: first,
      attributes: {
        chest_type_id: chestTypeId(mailboxApp.appId, 'golden-chest'),
        name: golden.name,
        description: golden.description,
        images: golden.images,
        source: 'special',
        received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        expires_at: expect.any(String),
      },
      relationships: {},
    });
    const { received_at, expires_at } = body.data[0].attributes;
    expect(Date.parse(expires_at) - Date.parse(received_at)).toBe(TTL_DAYS * 86_400_000);

    const page = await mailbox(p, '?page[limit]=1&page[offset]=1');
    expect(ids(page)).toEqual([second]);
    expect(page.links.prev).toContain('page%5Boffset%5D=0');
    expect(page.links.next).toBeNull();
    expectError(await get(stack, '/api/v1/players/me/mailbox?page[limit]=101', p.token, p.apiKey), 400);
    expectError(await get(stack, '/api/v1/players/me/mailbox?sort=expires_at', p.token, p.apiKey), 400);
    expectError(await get(stack, '/api/v1/players/me/mailbox', undefined, p.apiKey), 401, 'missing_token');
  });

  it('claims into the inventory once there is room: 409 while full, then 200, once, and a re-delivered grant adds nothing', async () => {
    const p = await newPlayer(mailboxApp);
    await grant(mailboxApp, p);
    await settle(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(2));
    const waiting = await grant(mailboxApp, p);
    await settle(async () => expect((await mailbox(p)).meta.total_count).toBe(1));

    expectError(await claim(p, waiting), 409, 'inventory_full');
    expect(ids(await mailbox(p))).toEqual([waiting]);
    expect((await open(stack, p, p.starterChestId)).statusCode).toBe(200);

    const res = await claim(p, waiting);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    expect(body.data).toMatchObject({
      type: 'chest',
      id: waiting,
      meta: { source: 'special', chest_type_id: chestTypeId(mailboxApp.appId, 'golden-chest') },
    });
    const inv = await inventory(stack, p);
    expect(ids(inv)).toContain(waiting);
    expect(inv.meta.inventory_status).toEqual({ capacity: 2, used: 2, available: 0 });
    expect((await mailbox(p)).data).toEqual([]);

    const again = await claim(p, waiting);
    expectError(again, 409, 'mailbox_item_claimed');
    expect(again.json().errors[0].meta).toEqual({ chest_id: waiting });
    await grant(mailboxApp, p, { id: waiting, times: 2 });
    await new Promise((r) => setTimeout(r, 700));
    expect(await rowsWithId(waiting)).toEqual({ inventory: 1, mailbox: 1 });
    expect((await mailbox(p)).meta.total_count).toBe(0);
    expect((await open(stack, p, waiting)).statusCode).toBe(200);
  });

  it("answers 404 to an unknown item, another player's and an expired one; 400 to a malformed id; 401 without a token", async () => {
    const [p, q] = await Promise.all([newPlayer(mailboxApp), newPlayer(mailboxApp)]);
    await grant(mailboxApp, p);
    await settle(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(2));
    const [mine, old] = [await grant(mailboxApp, p), await grant(mailboxApp, p)];
    await settle(async () => expect((await mailbox(p)).meta.total_count).toBe(2));
    expect((await open(stack, p, p.starterChestId)).statusCode).toBe(200);

    expectError(await claim(p, randomUUID()), 404, 'mailbox_item_not_found');
    expectError(await claim(q, mine), 404, 'mailbox_item_not_found');
    expect((await mailbox(q)).data).toEqual([]);
    expectError(await claim(p, 'not-a-uuid'), 400, 'invalid_id');
    const anonymous = await stack.inject({ method: 'POST', url: `/api/v1/players/me/mailbox/${mine}/claim`, headers: { apikey: p.apiKey } });
    expectError(anonymous, 401, 'missing_token');

    // Expiry: received TTL_DAYS + 1 days ago.
    await sql(
      stack,
      `UPDATE chests.mailbox_items SET received_at = received_at - interval '8 days', expires_at = expires_at - interval '8 days' WHERE id = $1`,
      [old],
    );
    expect(ids(await mailbox(p))).toEqual([mine]);
    expect((await mailbox(p)).meta.total_count).toBe(1);
    expectError(await claim(p, old), 404, 'mailbox_item_not_found');
    expect(await rowsWithId(old)).toEqual({ inventory: 0, mailbox: 1 });
    expect((await claim(p, mine)).statusCode).toBe(200);

    // The sweeper deletes items MAILBOX_GRACE_DAYS past their expiry (claimed or not), nothing younger.
    const shift = `interval '${MAILBOX_GRACE_DAYS + TTL_DAYS} days'`;
    await sql(stack, `UPDATE chests.mailbox_items SET expires_at = expires_at - ${shift} WHERE id = ANY($1::uuid[])`, [[old, mine]]);
    const db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    try {
      await db.query('SET search_path TO chests');
      expect(await deleteExpiredItems(db, MAILBOX_GRACE_DAYS)).toBe(2);
    } finally {
      await db.end();
    }
    expect(await rowsWithId(old)).toEqual({ inventory: 0, mailbox: 0 });
    expect(await rowsWithId(mine)).toEqual({ inventory: 1, mailbox: 0 });
  });

  it("answers another player's inventory without a Bearer token with 401, a guest's token with 403", async () => {
    const p = await newPlayer(mailboxApp);
    expectError(await get(stack, `/api/v1/players/${p.id}/chests`, undefined, p.apiKey), 401, 'missing_token');
    const guest = await stack.inject({ method: 'POST', url: '/api/v1/players/anonymous', headers: jsonApiHeaders(p.apiKey) });
    expectError(await get(stack, `/api/v1/players/${p.id}/chests`, guest.json().meta.access_token, p.apiKey), 403, 'guest_forbidden');
  });
});
