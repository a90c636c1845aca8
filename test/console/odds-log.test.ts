import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { AdminLoadContent, readContentFile } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { signedInConsole } from './support.js';
import { createApp, sql } from '../../services/chests/test/support/chests.js';

/**
 * The console's odds log (docs/design.md §7) in a real browser (Playwright and Debian's Chromium, as
 * console.test.ts): the page checks the log's hash chain and shows the changes waiting out their
 * notice period; a tampered entry shows the chain broken at that entry.
 */
describe('console: the odds log', () => {
  let stack: TestStack;
  let base: string;
  let browser: Browser;
  let game: { appId: string; publishableKey: string; secretKey: string };
  let total: number;
  let effectiveAt: string;
  let version: number;

  const admin = async (url: string) => {
    const res = await stack.inject({ method: 'GET', url, headers: { apikey: game.secretKey, accept: 'application/vnd.api+json' } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  beforeAll(async () => {
    stack = await startStack();
    await stack.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(stack.app.server.address() as AddressInfo).port}`;
    const content = readContentFile();
    content.compliance = { ...content.compliance!, odds_change_notice_hours: 48 };
    game = await createApp(stack, content);
    // A change of the silver chest's weights, announced 48 hours ahead.
    const next = structuredClone(content);
    const silver = next.chests.find((c) => c.id === 'silver-chest')!;
    silver.rules = { ...silver.rules, rarity_weights: { common: 60, rare: 30, legendary: 10 } };
    ({ version } = await stack.bus.request(AdminLoadContent, { appId: game.appId, content: next }, { requestId: randomUUID() }));
    total = content.chests.length + content.banners!.length + 1;
    const log = await eventually(async () => {
      const body = await admin('/api/v1/odds-log?page[limit]=100');
      expect(body.meta.total_count).toBe(total);
      return body;
    }, 20_000);
    effectiveAt = log.data.at(-1).attributes.effective_at;
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const signedIn = (width: number) => signedInConsole(browser, base, game.secretKey, width);

  const text = async (page: Page, testid: string) => (await page.getByTestId(testid).first().innerText()).trim();

  it('shows that the chain verifies, every entry newest first, and the pending change with its effective time', async () => {
    const { page, errors, close } = await signedIn(1280);
    await page.click('a[href="/console/chests"]');
    await page.click('[data-testid=odds-log-link]');
    await page.waitForURL(`${base}/console/odds-log`);
    expect(await text(page, 'chain-status')).toBe('Chain verifies');
    expect(await page.getByTestId('notice-success').innerText()).toContain(`all ${total} entries`);
    expect(await page.getByTestId('odds-log').locator('tbody tr').count()).toBe(total);
    // Newest first: the announced change, pending; the first version's entries in force.
    const states = await page.getByTestId('entry-state').allInnerTexts();
    expect(states[0]).toBe('pending');
    expect(states.slice(1).every((s) => s === 'effective')).toBe(true);
    const pending = page.getByTestId('pending-changes').locator('tbody tr');
    expect(await pending.count()).toBe(1);
    expect(await pending.first().innerText()).toContain('Silver Chest');
    expect(await text(page, 'pending-version')).toBe(String(version));
    expect(await text(page, 'pending-effective')).toBe(effectiveAt.replace('T', ' ').slice(0, 19));
    expect(errors).toEqual([]);
    await close();
  });

  it('fits a phone screen', async () => {
    const { page, errors, close } = await signedIn(390);
    await page.goto(`${base}/console/odds-log`);
    expect(await text(page, 'chain-status')).toBe('Chain verifies');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(errors).toEqual([]);
    await close();
  });

  it('shows the chain broken at a tampered entry', async () => {
    // Tampering below the API (the log is append-only through it): entry 2's rules version.
    await sql(stack, 'UPDATE chests.odds_log SET rules_version = rules_version + 100 WHERE app_id = $1 AND seq = 2', [game.appId]);
    const { page, close } = await signedIn(1280);
    await page.goto(`${base}/console/odds-log`);
    expect(await text(page, 'chain-status')).toBe('Chain broken at entry 2');
    expect(await page.getByTestId('notice-error').innerText()).toContain('its entry_hash is not the hash of its fields');
    await close();
  });
});
