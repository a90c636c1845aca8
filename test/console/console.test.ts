import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { readContentFile } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { createApp, grantChests, open, registerPlayer, wallet, type Player } from '../../services/chests/test/support/chests.js';

/**
 * The studio console (docs/console.md) in a real browser: Playwright driving Debian's Chromium
 * (CHROMIUM_PATH, default /usr/bin/chromium; `.ci/run` installs it) against the gateway on a real
 * port. It signs in with the secret key, checks the numbers of each page against the admin API,
 * loads a content file, retries a parked webhook delivery, and keeps a screenshot of every page at
 * desktop and phone sizes in artifacts/console/ (git-ignored; CI keeps them as artifacts).
 */
const SHOTS = new URL('../../artifacts/console/', import.meta.url).pathname;
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

  async function signedIn(size: keyof typeof SIZES = 'desktop'): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: SIZES[size] });
    const page = await context.newPage();
    await page.goto(`${base}/console`);
    expect(page.url()).toBe(`${base}/console/sign-in`);
    await page.fill('input[name=secret_key]', game.secretKey);
    await page.click('form[data-testid=sign-in] button');
    await page.waitForURL(`${base}/console`);
    return { context, page };
  }
  const text = async (page: Page, testid: string) => (await page.getByTestId(testid).first().innerText()).trim();

  it('refuses a wrong key and a publishable key, each with its reason; keeps the secret key out of the page, the URL and scripts', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/console/sign-in`);
    await page.fill('input[name=secret_key]', 'sk_nothing_like_a_key');
    await page.click('form[data-testid=sign-in] button');
    expect(await text(page, 'notice-error')).toContain('No app has that secret key');
    await page.fill('input[name=secret_key]', game.publishableKey);
    await page.click('form[data-testid=sign-in] button');
    expect(await text(page, 'notice-error')).toContain('publishable key');
    await context.close();

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
    await signed.close();
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
    await context.close();
  });

  it('looks up a player who opened chests, with the same balances, chests, openings and collection progress as the API', async () => {
    email = (await admin(`/api/v1/admin/players/${ada.id}`)).data.attributes.email;
    const { context, page } = await signedIn();
    await page.click('a[href="/console/players"]');
    await page.getByTestId('player-search').locator('input').fill(email.toUpperCase());
    await page.getByTestId('player-search').locator('button').click();
    await page.waitForSelector('[data-testid=player-id]');
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
    await page.screenshot({ path: `${SHOTS}player-desktop.png`, fullPage: true });
    // An unknown player: an error state, not a crash.
    await page.goto(`${base}/console/players/nobody@example.com`);
    expect(await text(page, 'notice-error')).toContain('No player');
    await context.close();
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
    await page.screenshot({ path: `${SHOTS}chest-desktop.png`, fullPage: true });
    await context.close();
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
    await context.close();
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
    const retry = page.locator('button[data-testid^=retry-]');
    await retry.click();
    await eventually(async () => {
      const d = (await admin(`/api/v1/admin/webhooks/${endpointId}/deliveries`)).data[0];
      expect(d.attributes.status).toBe('delivered');
    }, 10_000);
    await page.goto(`${base}/console/webhooks/${endpointId}`);
    expect(await page.getByTestId('deliveries').innerText()).toContain('delivered');
    await page.screenshot({ path: `${SHOTS}webhook-desktop.png`, fullPage: true });
    await context.close();
  });

  it('works at desktop and phone sizes: every page renders without horizontal overflow of the page itself', async () => {
    const endpointId = (await admin('/api/v1/admin/webhooks')).data[0]?.id as string;
    for (const size of ['desktop', 'phone'] as const) {
      const { context, page } = await signedIn(size);
      for (const [name, path] of [
        ['overview', '/console'],
        ['players', '/console/players'],
        ['player', `/console/players/${ada.id}`],
        ['chests', '/console/chests'],
        ['content', '/console/content'],
        ['webhooks', '/console/webhooks'],
        ['webhook', `/console/webhooks/${endpointId}`],
        ['audit', '/console/audit'],
      ] as const) {
        const res = await page.goto(`${base}${path}`);
        expect(res?.status(), path).toBe(200);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${path} at ${size}`).toBeLessThanOrEqual(1);
        await page.screenshot({ path: `${SHOTS}${name}-${size}.png`, fullPage: true });
      }
      await context.close();
    }
    // Every console call went through the admin API and is in the audit log.
    const audit = (await admin('/api/v1/admin/audit?page[limit]=100')).data.map((e: { attributes: { action: string } }) => e.attributes.action);
    expect(audit).toEqual(expect.arrayContaining(['GET /api/v1/admin/overview', 'GET /api/v1/admin/players/{id}', 'POST /api/v1/admin/content']));
  }, 60_000);
});
