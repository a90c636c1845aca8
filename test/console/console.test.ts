import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { readContentFile } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { chartPainted, layoutProblems, REPORT_CSP } from './support.js';
import {
  catalogIds,
  createApp,
  grantChests,
  open,
  purchase,
  registerPlayer,
  wallet,
  type Player,
} from '../../services/chests/test/support/chests.js';
import { ledgerLabel } from '../../services/gateway/src/console/pages/players.js';

/**
 * The studio console (docs/console.md) in a real browser: Playwright driving Debian's Chromium
 * (CHROMIUM_PATH, default /usr/bin/chromium; `.ci/run` installs it) against the gateway on a real
 * port. It signs in with the secret key, checks the numbers of each page against the admin API,
 * runs simulations again, loads a content file, retries a parked webhook delivery and removes an
 * endpoint (asked first). Every page of every test fails it on a console error, an uncaught page
 * error or a Content-Security-Policy violation. Every page is checked at 1280 and 390 px for
 * overflow and heading sizes, with a screenshot of each in a temporary directory (CONSOLE_SHOTS
 * chooses another; the path is printed).
 */
const SHOTS = `${process.env.CONSOLE_SHOTS ?? mkdtempSync(join(tmpdir(), 'console-shots-'))}/`;
const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

describe('studio console in a browser', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let base: string;
  let browser: Browser;
  let game: { appId: string; publishableKey: string; secretKey: string };
  let ada: Player;
  let email: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    console.info(`console screenshots: ${SHOTS}`);
    receiver = await new WebhookReceiver().start();
    receiver.on('/down', () => ({ status: 503 }));
    stack = await startStack({
      env: {
        WEBHOOK_BACKOFF_BASE_MS: '50',
        WEBHOOK_BACKOFF_MAX_MS: '100',
        WEBHOOK_RETRY_WINDOW_MS: '1000',
        WEBHOOK_POLL_MS: '50',
        WEBHOOK_ALLOW_TARGETS: receiver.target,
      },
    });
    await stack.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(stack.app.server.address() as AddressInfo).port}`;
    game = await createApp(stack);
    ada = await registerPlayer(stack, game.publishableKey);
    const chests = await grantChests(stack, ada, 'silver-chest', 2);
    for (const c of chests) expect((await open(stack, ada, c)).statusCode).toBe(200);
    // A purchase, for the ledger's labels.
    const silver = (await catalogIds(stack, game.publishableKey))['Silver Chest']!;
    expect((await purchase(stack, ada, silver, 'coins')).statusCode).toBe(201);
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await receiver?.close();
  });

  const admin = async (url: string) => {
    const res = await stack.inject({ method: 'GET', url, headers: { apikey: game.secretKey, accept: 'application/vnd.api+json' } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  /** The console errors, page errors and CSP violations of each context's pages (checked by `done`). */
  const problems = new Map<BrowserContext, string[]>();
  async function browse(size: keyof typeof SIZES = 'desktop'): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: SIZES[size] });
    await context.addInitScript(REPORT_CSP);
    const found: string[] = [];
    problems.set(context, found);
    context.on('page', (p) => {
      p.on('console', (m) => {
        if (m.type() === 'error') found.push(`${p.url()}: ${m.text()}${m.location().url ? ` (${m.location().url})` : ''}`);
      });
      p.on('pageerror', (e) => found.push(`${p.url()}: ${e.message}`));
    });
    return { context, page: await context.newPage() };
  }
  /** Closes a context: none of its pages may have logged an error, thrown, or broken the CSP. */
  async function done(context: BrowserContext, expected: RegExp[] = []) {
    const found = (problems.get(context) ?? []).filter((p) => !expected.some((e) => e.test(p)));
    await context.close();
    expect(found).toEqual([]);
  }

  async function signedIn(size: keyof typeof SIZES = 'desktop'): Promise<{ context: BrowserContext; page: Page }> {
    const { context, page } = await browse(size);
    await page.goto(`${base}/console`);
    expect(page.url()).toBe(`${base}/console/sign-in`);
    await page.fill('input[name=secret_key]', game.secretKey);
    await page.click('form[data-testid=sign-in] button');
    await page.waitForURL(`${base}/console`);
    return { context, page };
  }
  const text = async (page: Page, testid: string) => (await page.getByTestId(testid).first().innerText()).trim();

  it('refuses a wrong key and a publishable key, each with its reason; keeps the secret key out of the page, the URL and scripts', async () => {
    const { context, page } = await browse();
    await page.goto(`${base}/console/sign-in`);
    await page.fill('input[name=secret_key]', 'sk_nothing_like_a_key');
    await page.click('form[data-testid=sign-in] button');
    expect(await text(page, 'notice-error')).toContain('No app has that secret key');
    await page.fill('input[name=secret_key]', game.publishableKey);
    await page.click('form[data-testid=sign-in] button');
    expect(await text(page, 'notice-error')).toContain('publishable key');
    // The refusals answer 401 and 403, which Chromium reports as failed loads; nothing else.
    await done(context, [/status of 40[13]/]);

    const { context: signed, page: p } = await signedIn();
    const cookies = await signed.cookies();
    const session = cookies.find((c) => c.name === 'ccs_console')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(session.value).not.toContain(game.secretKey);
    const visible = await p.evaluate(() => ({
      cookie: document.cookie,
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
      html: document.documentElement.outerHTML,
    }));
    for (const where of Object.values(visible)) expect(where).not.toContain(game.secretKey);
    expect(p.url()).not.toContain(game.secretKey);
    // A cross-site form post is refused even with the cookie.
    const forged = await signed.request.post(`${base}/console/sign-out`, { headers: { origin: 'https://evil.example' } });
    expect(forged.status()).toBe(403);
    await done(signed);
  });

  it('shows the overview with the numbers of the admin API and a chart of openings over time', async () => {
    const { context, page } = await signedIn();
    const o = (await admin('/api/v1/admin/overview')).data.attributes;
    expect(Number(await text(page, 'players-total'))).toBe(o.players.total);
    expect(Number(await text(page, 'openings-24h'))).toBe(o.openings_last_24h);
    expect(o.openings_last_24h).toBe(2);
    await page.waitForSelector('#openings-chart[data-drawn="1"]');
    const points = await page.evaluate(
      () => JSON.parse((document.getElementById('openings-chart') as HTMLCanvasElement).dataset.chart!).datasets[0].data,
    );
    expect(points.reduce((n: number, x: number) => n + x, 0)).toBe(2);
    await page.screenshot({ path: `${SHOTS}overview-desktop.png`, fullPage: true });
    await done(context);
  });

  it('looks up a player who opened chests, with the same balances, chests, openings and collection progress as the API', async () => {
    email = (await admin(`/api/v1/admin/players/${ada.id}`)).data.attributes.email;
    const { context, page } = await signedIn();
    await page.click('a[href="/console/players"]');
    // By the start of the email, in another case: the one player found, linked to their page by id.
    await page.getByTestId('player-search').locator('input').fill(email.toUpperCase().slice(0, 12));
    await page.getByTestId('player-search').locator('button').click();
    await page.waitForURL(`${base}/console/players/search`);
    await page.getByTestId('player-link').click();
    await page.waitForSelector('[data-testid=player-id]');
    expect(page.url()).toBe(`${base}/console/players/${ada.id}`);
    const api = (await admin(`/api/v1/admin/players/${ada.id}`)).data.attributes;
    expect(await text(page, 'player-id')).toBe(ada.id);
    expect(Number(await text(page, 'player-openings'))).toBe(api.openings.total);
    expect(api.openings.total).toBe(2);
    expect(Number(await text(page, 'player-chests'))).toBe(api.inventory.total_chests);
    const own = await wallet(stack, ada);
    for (const b of api.balances as { code: string; amount: string }[]) {
      expect(await text(page, `balance-${b.code}`)).toBe(b.amount);
      expect(b.amount).toBe(own[b.code]!.balance);
    }
    for (const c of api.collections as { id: string; unique_items: number }[]) expect(Number(await text(page, `owned-${c.id}`))).toBe(c.unique_items);
    await page.waitForSelector('#completion-chart[data-drawn="1"]');
    expect((await page.getByTestId('player-openings-table').locator('tbody tr').count()) as number).toBe(2);
    // Chest types and items by their names in the catalog, not their UUIDs and slugs.
    const chestNames = new Map<string, string>(
      (await admin('/api/v1/chests?page[limit]=100')).data.map((c: { id: string; attributes: { name: string } }) => [c.id, c.attributes.name]),
    );
    const itemNames = new Map<string, string>(
      (await admin('/api/v1/collectibles?page[limit]=100')).data.map((c: { id: string; attributes: { name: string } }) => [c.id, c.attributes.name]),
    );
    const latest = api.openings.latest as { chest_type_id: string; items: { collectible_id: string; rarity: string }[] }[];
    expect(await page.getByTestId('opening-chest').allInnerTexts()).toEqual(latest.map((o) => chestNames.get(o.chest_type_id)));
    expect(await page.getByTestId('opening-items').allInnerTexts()).toEqual(
      latest.map((o) => o.items.map((i) => `${itemNames.get(i.collectible_id)} (${i.rarity})`).join(', ')),
    );
    // The purchase's debit says what it paid for.
    expect(await page.getByTestId('ledger-label').allInnerTexts()).toContain('purchase');
    // The email on one line, cut with an ellipsis when it does not fit.
    const emailBox = await page.getByTestId('player-email').evaluate((el) => ({
      lines: Math.round(el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight)),
      ellipsis: getComputedStyle(el).textOverflow,
      title: el.getAttribute('title'),
    }));
    expect(emailBox).toEqual({ lines: 1, ellipsis: 'ellipsis', title: email });
    await page.screenshot({ path: `${SHOTS}player-desktop.png`, fullPage: true });
    // An unknown player: an error state, not a crash.
    await page.goto(`${base}/console/players/${randomUUID()}`);
    expect(await text(page, 'notice-error')).toContain('No such player');
    await done(context, [/status of 404/]);
  });

  it('shows the spend limits that hold a player, with the rule pack behind each, as the API does', async () => {
    // The demo content applies the CN pack: a 14-year-old in China is held to its caps in CNY paid at the stores.
    const declare = async (p: Player, attributes: Record<string, unknown>) => {
      const patched = await stack.inject({
        method: 'PATCH',
        url: '/api/v1/players/me',
        headers: { apikey: game.publishableKey, authorization: `Bearer ${p.token}`, 'content-type': 'application/vnd.api+json' },
        payload: { data: { type: 'player', attributes } },
      });
      expect(patched.statusCode, patched.body).toBe(200);
    };
    const minor = await registerPlayer(stack, game.publishableKey);
    await declare(minor, { country: 'CN', birth_year: new Date().getUTCFullYear() - 15 });
    const api = (await admin(`/api/v1/admin/players/${minor.id}`)).data.attributes.spend_limits as {
      period: string;
      limit: number;
      spent: number;
      money?: string;
    }[];
    expect(api.map((l) => [l.period, l.limit, l.spent, l.money])).toEqual([
      ['month', 200, 0, 'CNY'],
      ['payment', 50, 0, 'CNY'],
    ]);
    const { context, page } = await signedIn();
    await page.goto(`${base}/console/players/${minor.id}`);
    await page.waitForSelector('[data-testid=player-spend-limits]');
    for (const l of api) {
      expect(Number(await text(page, `limit-${l.period}`))).toBe(l.limit);
      expect(await text(page, `money-${l.period}`)).toBe('CNY');
    }
    expect(await page.getByTestId('player-spend-limits').innerText()).toContain('CN rule pack: minor_spend_limits_8_to_15');
    // A player no limit holds (an adult in Germany) has no such section; one who declared nothing
    // is held to every limit that could apply, as the gate holds them.
    const adult = await registerPlayer(stack, game.publishableKey);
    await declare(adult, { country: 'DE', birth_year: 1990 });
    await page.goto(`${base}/console/players/${adult.id}`);
    await page.waitForSelector('[data-testid=player-id]');
    expect(await page.getByTestId('player-spend-limits').count()).toBe(0);
    await done(context);
  });

  it('labels debits by what their reference names: a purchase, a key, a timer skip', () => {
    const purchaseId = '0b7e3c52-2f4e-4c8e-9a51-3e0f3b0b6d11';
    expect(ledgerLabel({ reason: 'debit', reference: purchaseId })).toBe('purchase');
    expect(ledgerLabel({ reason: 'debit', reference: `key:${purchaseId}` })).toBe('key');
    expect(ledgerLabel({ reason: 'debit', reference: `unlock:${purchaseId}` })).toBe('timer skip');
    expect(ledgerLabel({ reason: 'debit_refund', reference: `unlock:${purchaseId}` })).toBe('timer skip refund');
    expect(ledgerLabel({ reason: 'debit', reference: 'something-else' })).toBe('debit');
    expect(ledgerLabel({ reason: 'debit', reference: null })).toBe('debit');
    expect(ledgerLabel({ reason: 'welcome_bonus', reference: null })).toBe('welcome_bonus');
  });

  it("charts a chest's disclosed odds against its real drops and a simulation's, with the API's numbers", async () => {
    const { context, page } = await signedIn();
    await page.goto(`${base}/console/chests`);
    await page.getByTestId('chests').locator('tr', { hasText: 'Silver' }).locator('a').click();
    await page.waitForSelector('#drops-chart[data-drawn="1"]');
    const drops = (await admin('/api/v1/admin/chests/silver-chest/drops')).data.attributes;
    expect(Number(await text(page, 'drops-openings'))).toBe(drops.openings);
    expect(drops.openings).toBe(2);
    expect(Number(await text(page, 'drops-items'))).toBe(drops.items);
    for (const r of drops.rarities as { rarity: string; count: number }[]) expect(Number(await text(page, `drops-${r.rarity}`))).toBe(r.count);
    await page.waitForSelector('#odds-chart[data-drawn="1"]', { timeout: 20_000 });
    const rows = await page.getByTestId('simulation').locator('tbody tr').count();
    expect(rows).toBeGreaterThan(0);
    const p = Number(await text(page, 'p-rarities'));
    expect(p).toBeGreaterThanOrEqual(0);
    expect(p).toBeLessThanOrEqual(1);
    await page.waitForTimeout(200);
    expect(await page.evaluate(chartPainted, 'odds-chart')).toBe(true);
    // Run again, twice: each new chart is drawn at once at its size (no resize needed), without a CSP violation.
    for (const seed of ['0a0b', '0c0d']) {
      await page.getByTestId('simulation-form').locator('input[name=seed]').fill(seed);
      await page.getByTestId('simulation-form').locator('button').click();
      await page.locator('#simulation code', { hasText: seed }).waitFor({ timeout: 20_000 });
      await page.waitForSelector('#odds-chart[data-drawn="1"]');
      await page.waitForTimeout(200);
      expect(await page.evaluate(chartPainted, 'odds-chart'), `chart of run ${seed}`).toBe(true);
    }
    await page.screenshot({ path: `${SHOTS}chest-desktop.png`, fullPage: true });
    await done(context);
  });

  it('loads a content file (refusing bad ones with their problems), and escapes what content says', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${base}/console/content`);
    const before = (await admin('/api/v1/admin/content')).meta.current_version as number;
    await page.fill('#content-text', '{ not json');
    await page.click('form[data-testid=content-form] button');
    expect(await text(page, 'notice-error')).toContain('not valid JSON');
    await page.fill('#content-text', JSON.stringify({ currencies: [] }));
    await page.click('form[data-testid=content-form] button');
    expect(await page.getByTestId('notice-error').locator('li').count()).toBeGreaterThan(1);

    const content = readContentFile();
    content.chests[0]!.name = '<img src=x id=injected>Silver';
    await page.fill('#content-text', JSON.stringify(content));
    await page.click('form[data-testid=content-form] button');
    expect(await text(page, 'notice-success')).toContain(`version ${before + 1}`);
    await page.getByTestId(`version-${before + 1}`).waitFor();
    expect((await admin('/api/v1/admin/content')).meta.current_version).toBe(before + 1);
    await page.screenshot({ path: `${SHOTS}content-desktop.png`, fullPage: true });
    await eventually(async () => {
      await page.goto(`${base}/console/chests`);
      expect(await page.getByTestId('chests').innerText()).toContain('<img src=x id=injected>Silver');
    }, 15_000);
    expect(await page.$('#injected')).toBeNull();
    // The two refused files answer 422, which Chromium reports as failed loads.
    await done(context, [/status of 422/]);
  });

  it('adds a webhook endpoint (its secret shown once), shows a parked delivery and retries it', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${base}/console/webhooks`);
    await page.getByTestId('notice-empty').waitFor();
    await page.fill('input[name=url]', receiver.url('/down'));
    await page.check('input[value="chest.opened"]');
    await page.click('form[data-testid=webhook-form] button');
    expect(await text(page, 'new-secret')).toMatch(/^whsec_/);
    const [chest] = await grantChests(stack, ada, 'silver-chest', 1);
    expect((await open(stack, ada, chest!)).statusCode).toBe(200);
    const endpointId = (await admin('/api/v1/admin/webhooks')).data[0].id as string;
    await eventually(
      async () => expect((await admin(`/api/v1/admin/webhooks/${endpointId}/deliveries?filter[status]=parked`)).data).toHaveLength(1),
      15_000,
    );
    await page.goto(`${base}/console/webhooks/${endpointId}?status=parked`);
    receiver.on('/down', () => ({ status: 200 }));
    expect(await page.locator('a[href$="?status=parked"]').innerText()).toBe('parked (1)');
    const retry = page.locator('button[data-testid^=retry-]');
    await retry.click();
    // Back on the page, its counts read again: the delivery is no longer parked.
    await page.waitForURL(/retried=.*status=parked/);
    expect(await text(page, 'notice-success')).toContain('sent again');
    expect(await page.locator('a[href$="?status=parked"]').innerText()).toBe('parked (0)');
    await eventually(async () => {
      const d = (await admin(`/api/v1/admin/webhooks/${endpointId}/deliveries`)).data[0];
      expect(d.attributes.status).toBe('delivered');
    }, 10_000);
    await page.goto(`${base}/console/webhooks/${endpointId}`);
    expect(await page.getByTestId('deliveries').innerText()).toContain('delivered');
    await page.screenshot({ path: `${SHOTS}webhook-desktop.png`, fullPage: true });
    await done(context);
  });

  it('works at 1280 and 390 px: every page fits the screen, its title above its headings, its header one row, its charts full size', async () => {
    const endpointId = (await admin('/api/v1/admin/webhooks')).data[0]?.id as string;
    const chestId = (await admin('/api/v1/chests?page[limit]=100')).data[0]?.id as string;
    for (const size of ['desktop', 'phone'] as const) {
      const anonymous = await browse(size);
      await anonymous.page.goto(`${base}/console/sign-in`);
      expect(await anonymous.page.evaluate(layoutProblems), `sign-in at ${size}`).toEqual([]);
      await anonymous.page.screenshot({ path: `${SHOTS}sign-in-${size}.png`, fullPage: true });
      await done(anonymous.context);

      const { context, page } = await signedIn(size);
      for (const [name, path] of [
        ['overview', '/console'],
        ['players', '/console/players'],
        ['player', `/console/players/${ada.id}`],
        ['chests', '/console/chests'],
        ['chest', `/console/chests/${chestId}`],
        ['store', '/console/store'],
        ['content', '/console/content'],
        ['content-diff', '/console/content/1/diff'],
        ['webhooks', '/console/webhooks'],
        ['webhook', `/console/webhooks/${endpointId}`],
        ['audit', '/console/audit'],
      ] as const) {
        const res = await page.goto(`${base}${path}`);
        expect(res?.status(), path).toBe(200);
        if (name === 'chest') await page.waitForSelector('#odds-chart[data-drawn="1"]', { timeout: 20_000 });
        await page.waitForTimeout(100);
        expect(await page.evaluate(layoutProblems), `${path} at ${size}`).toEqual([]);
        await page.screenshot({ path: `${SHOTS}${name}-${size}.png`, fullPage: true });
      }
      if (size === 'phone') {
        // The phone's menu opens and leads to every page.
        await page.locator('.nav-phone summary').click();
        await page.locator('.nav-phone a[href="/console/audit"]').click();
        await page.waitForURL(`${base}/console/audit`);
      }
      await done(context);
    }
    // The console's actions went through the admin API and are in the audit log; its page views are not.
    const audit = (await admin('/api/v1/admin/audit?page[limit]=100')).data.map((e: { attributes: { action: string } }) => e.attributes.action);
    expect(audit).toEqual(expect.arrayContaining(['POST /api/v1/admin/content', 'POST /api/v1/admin/webhooks']));
    expect(audit.filter((a: string) => a.startsWith('GET '))).toEqual([]);
  }, 90_000);

  it('removes a webhook endpoint only once asked and confirmed', async () => {
    const endpointId = (await admin('/api/v1/admin/webhooks')).data[0]?.id as string;
    const listed = async () => ((await admin('/api/v1/admin/webhooks')).data as { id: string }[]).map((e) => e.id);
    const { context, page } = await signedIn('phone');
    await page.goto(`${base}/console/webhooks/${endpointId}`);
    await page.getByTestId('remove-form').locator('button').click();
    expect(await text(page, 'notice-warning')).toContain('cannot be undone');
    expect(await page.evaluate(layoutProblems)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}webhook-remove-phone.png`, fullPage: true });
    expect(await listed()).toContain(endpointId);
    // The server removes nothing without the confirmation, whatever posts the form.
    const unconfirmed = await context.request.post(`${base}/console/webhooks/${endpointId}/delete`, { headers: { origin: base }, form: {} });
    expect(unconfirmed.status()).toBe(200);
    const wrong = await context.request.post(`${base}/console/webhooks/${endpointId}/delete`, {
      headers: { origin: base },
      form: { confirm: 'yes' },
    });
    expect(wrong.status()).toBe(200);
    expect(await listed()).toContain(endpointId);
    await page.getByTestId('cancel-remove').click();
    await page.waitForURL(`${base}/console/webhooks/${endpointId}`);
    await page.getByTestId('remove-form').locator('button').click();
    await page.getByTestId('confirm-remove').locator('button').click();
    await page.waitForURL(`${base}/console/webhooks?removed=1`);
    expect(await text(page, 'notice-success')).toContain('removed');
    expect(await listed()).not.toContain(endpointId);
    await done(context);
  });
});
