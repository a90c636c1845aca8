import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../support/stack.js';
import { chartPainted, layoutProblems, signedInConsole } from './support.js';
import { createApp, registerPlayer, studioGrant } from '../../services/chests/test/support/chests.js';

/**
 * The console's banners (docs/design.md §8) in a real browser (Playwright and Debian's
 * Chromium, as console.test.ts): after a ten-pull and two single pulls of the demo banner
 * kraken-rising, its page (reached from the navigation and from the chests catalog) shows the
 * disclosed figures, the seeded simulation and the real pulls side by side, as the admin API
 * answers them; the page holds on a phone screen. Screenshots go to a temporary directory.
 */
const SHOTS = process.env.CONSOLE_SHOTS ?? mkdtempSync(join(tmpdir(), 'console-banners-'));

describe('console: banners', () => {
  let stack: TestStack;
  let base: string;
  let browser: Browser;
  let game: { appId: string; publishableKey: string; secretKey: string };
  /** The admin API's answer after the pulls, which the page must show. */
  let stats: {
    real: Record<string, number> & { featured_share: { share: number } };
    disclosed: { long_run_share: number; expected_pulls_to_featured: { with_guarantee: number; without_guarantee: number } };
    simulation: { pulls: number; featured_share: { share: number } };
  };

  beforeAll(async () => {
    stack = await startStack();
    await stack.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(stack.app.server.address() as AddressInfo).port}`;
    game = await createApp(stack);
    await eventually(async () => {
      const res = await stack.inject({ method: 'GET', url: '/api/v1/banners/kraken-rising', headers: { apikey: game.publishableKey } });
      expect(res.statusCode).toBe(200);
    }, 20_000);
    // A few pulls of the demo banner: a ten-pull and two single pulls (2,500 coins each).
    const p = await registerPlayer(stack, game.publishableKey);
    await studioGrant(stack, p, 'coins', '30000');
    for (const count of [10, 1, 1]) {
      const res = await stack.inject({
        method: 'POST',
        url: '/api/v1/banners/kraken-rising/pull',
        headers: jsonApiHeaders(p.apiKey, p.token),
        payload: { data: { type: 'pull', attributes: { count, currency: 'coins' } } },
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const res = await stack.inject({
      method: 'GET',
      url: '/api/v1/admin/banners/kraken-rising/stats',
      headers: { apikey: game.secretKey, accept: 'application/vnd.api+json' },
    });
    expect(res.statusCode, res.body).toBe(200);
    stats = res.json().data.attributes;
    expect(stats.real.pulls).toBe(12);
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
    console.info(`console banner screenshots: ${SHOTS}`);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const signedIn = (width: number) => signedInConsole(browser, base, game.secretKey, width);

  const text = async (page: Page, testid: string) => (await page.getByTestId(testid).first().innerText()).trim();
  const pct = (x: number) => Math.round(x * 10_000) / 100;

  it('lists the banner from the navigation and shows its disclosed figures, simulation and real pulls side by side', async () => {
    const { page, errors, close } = await signedIn(1280);
    await page.click('.nav-wide a[href="/console/banners"]');
    await page.waitForURL(`${base}/console/banners`);
    expect(await page.getByTestId('banners').locator('tbody tr').count()).toBe(1);
    expect(await page.getByTestId('banners').innerText()).toContain('Kraken');
    await page.click('[data-testid=banner-link]');
    await page.waitForURL(`${base}/console/banners/kraken-rising`);
    // The banner: window, chest, featured collectible, spark, floor.
    expect(await text(page, 'banner-window')).toMatch(
      /^Active · 2026-11-01 00:00:00 to 2027-07-01 00:00:00 UTC · pulls Abyssal Chest \(rules v\d+\)$/,
    );
    expect(await text(page, 'banner-featured')).toContain('sea-kraken');
    expect(await text(page, 'banner-spark')).toBe(
      "10 points (one per pull in the pity group) for a featured collectible of choice; left when the group's last banner ends: converted to coins",
    );
    expect(await text(page, 'banner-floor')).toBe('legendary or better in every ten-pull');
    // Real pulls as the admin API counts them.
    expect(await text(page, 'real-pulls')).toBe('12');
    expect(await text(page, 'real-players')).toBe('1');
    expect(await text(page, 'real-rarity-items')).toBe(String(stats.real.featured_rarity_items));
    expect(await text(page, 'real-featured-items')).toBe(String(stats.real.featured_items));
    expect(await text(page, 'real-guarantees')).toBe(String(stats.real.guarantees_used));
    expect(await text(page, 'real-floor')).toBe(String(stats.real.floor_rerolls));
    expect(await text(page, 'real-sparks')).toBe('0 exchanges · 12 points held');
    expect(await text(page, 'real-settled')).toBe('0 (0 players)');
    // A ten-pull holds a legendary (the floor): the featured share is measured.
    expect(stats.real.featured_rarity_items).toBeGreaterThan(0);
    expect(await text(page, 'real-share')).toMatch(new RegExp(`^${pct(stats.real.featured_share.share)} % \\(95 %: [\\d.]+–[\\d.]+\\)$`));
    // Disclosed: the 50/50, its long run 2/3, the demo banner's 4.8 and 6.3 pulls.
    expect(await text(page, 'disclosed-share')).toBe('50 % (long run 66.67 %)');
    expect(await text(page, 'disclosed-pulls')).toBe('4.8 with the guarantee, 6.3 without');
    // The simulation, seeded: the API's own figures.
    expect(await text(page, 'sim-pulls')).toBe('5,000');
    expect(await text(page, 'sim-share')).toMatch(new RegExp(`^${pct(stats.simulation.featured_share.share)} % \\(95 %: `));
    expect(await page.getByTestId('banner-side-by-side').locator('tbody tr').count()).toBe(10);
    await page.waitForFunction(() => document.getElementById('featured-chart')?.dataset.drawn === '1');
    expect(await page.evaluate(chartPainted, 'featured-chart')).toBe(true);
    expect(await page.evaluate(layoutProblems)).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'banner-desktop.png'), fullPage: true });
    expect(errors).toEqual([]);
    await close();
  });

  it("is reached from the chests catalog: a link per banner pulling a chest, on the chest's row", async () => {
    const { page, errors, close } = await signedIn(1280);
    await page.click('.nav-wide a[href="/console/chests"]');
    await page.waitForURL(`${base}/console/chests`);
    const links = page.getByTestId('chest-banner-link');
    expect(await links.count()).toBe(1);
    const row = page.getByTestId('chests').locator('tbody tr', { has: links });
    expect(await row.innerText()).toContain('Abyssal Chest');
    await links.first().click();
    await page.waitForURL(`${base}/console/banners/kraken-rising`);
    expect(await text(page, 'real-pulls')).toBe('12');
    expect(errors).toEqual([]);
    await close();
  });

  it('fits a phone screen, and says so for an unknown or malformed banner', async () => {
    const { page, errors, close } = await signedIn(390);
    await page.goto(`${base}/console/banners/kraken-rising`);
    await page.waitForFunction(() => document.getElementById('featured-chart')?.dataset.drawn === '1');
    expect(await page.evaluate(layoutProblems)).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'banner-phone.png'), fullPage: true });
    await page.goto(`${base}/console/banners`);
    expect(await page.evaluate(layoutProblems)).toEqual([]);
    const unknown = await page.goto(`${base}/console/banners/no-such-banner`);
    expect(unknown!.status()).toBe(404);
    expect(await page.getByTestId('notice-error').innerText()).toContain('No banner with this id.');
    const malformed = await page.goto(`${base}/console/banners/Not_A_Slug`);
    expect(malformed!.status()).toBe(404);
    // Only the two 404 pages asked for on purpose.
    expect(errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
    await close();
  });
});
