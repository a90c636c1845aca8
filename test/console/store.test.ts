import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { eventually, jsonApiHeaders } from '../support/stack.js';
import { expectJsonApi } from '../support/jsonapi-schema.js';
import {
  appleGems,
  balances,
  googleGems,
  newPlayer,
  postAppleNotification,
  startStoreStack,
  storeContent,
  submitApple,
  submitGoogle,
  type StoreStack,
} from '../support/store/store-stack.js';
import type { RegisteredPlayer } from '../support/register.js';
import { catalogIds, createApp, purchase } from '../../services/chests/test/support/chests.js';
import { layoutProblems, signedInConsole } from './support.js';

/**
 * The console's store pages in a real browser (Playwright and Debian's Chromium, as
 * console.test.ts), over real store data: a player buys 500 gems in the App Store and spends
 * them, Apple refunds that purchase (the gems go below zero: a debt); the player buys the starter
 * pack in Google Play and in the App Store, and Apple refunds the latter and then reverses the
 * refund. The player's page lists the purchases and the refunds as the admin API answers them and
 * shows the debt; the store page lists the products' sales, refund rates and revenue and the
 * Google service account (or that none is set); the content diff names the store's changes. Each
 * page fits 1280 and 390 px, without a console error or CSP violation.
 */
const SHOTS = process.env.CONSOLE_SHOTS ?? mkdtempSync(join(tmpdir(), 'console-store-'));

describe('console: store purchases, refunds and products', () => {
  let s: StoreStack;
  let base: string;
  let browser: Browser;
  let ada: RegisteredPlayer;

  const admin = async (url: string, key = s.secretKey) => {
    const res = await s.stack.inject({ method: 'GET', url, headers: { apikey: key, accept: 'application/vnd.api+json' } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    return body;
  };
  const notify = async (options: Parameters<StoreStack['pki']['signNotification']>[0]) => {
    const res = await postAppleNotification(s, await s.pki.signNotification(options));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().meta.outcome).toBe('applied');
  };

  /** Ada's purchases and refunds: see the file's header. */
  async function buyAndRefund() {
    ada = await newPlayer(s);
    // An adult in Germany: no spend limit holds her.
    const declared = await s.stack.inject({
      method: 'PATCH',
      url: '/api/v1/players/me',
      headers: jsonApiHeaders(s.stack.apiKey, ada.token),
      payload: { data: { type: 'player', attributes: { country: 'DE', birth_year: 1990 } } },
    });
    expect(declared.statusCode, declared.body).toBe(200);
    const gems = await appleGems(s, ada.id);
    expect((await submitApple(s, ada.token, gems)).statusCode).toBe(201);
    // 10 + 5 gems of her start and the 500 bought: ten golden chests (50 gems each) spend 500 of them.
    const golden = (await catalogIds(s.stack))['Golden Chest']!;
    const bought = await purchase(s.stack, ada, golden, 'gems', 10);
    expect(bought.statusCode, bought.body).toBe(201);
    await notify({ notificationType: 'REFUND', signedTransactionInfo: gems });
    const google = googleGems(s, ada.id, { productId: 'starter_pack', price: '9.99', currency: 'EUR' });
    expect((await submitGoogle(s, ada.token, 'starter_pack', google.token)).statusCode).toBe(201);
    const pack = await appleGems(s, ada.id, { productId: 'com.example.chests.starter_pack', price: 9990 });
    expect((await submitApple(s, ada.token, pack)).statusCode).toBe(201);
    // Apple's order: the refund, then (signed later) its reversal.
    await notify({ notificationType: 'REFUND', signedTransactionInfo: pack, extra: { signedDate: Date.now() - 1000 } });
    await notify({ notificationType: 'REFUND_REVERSED', signedTransactionInfo: pack });
    // The wallet applied all of it: 15 - 500 + 50 (Google's pack) - 50 + 50 (Apple's, refunded and given again).
    await eventually(async () => expect(Number((await balances(s, ada.token)).gems)).toBe(-385), 20_000);
  }

  beforeAll(async () => {
    s = await startStoreStack();
    await s.stack.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(s.stack.app.server.address() as AddressInfo).port}`;
    await buyAndRefund();
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
    console.info(`console store screenshots: ${SHOTS}`);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  const signedIn = (width: number, key = s.secretKey) => signedInConsole(browser, base, key, width);
  const texts = (page: Page, testid: string) => page.getByTestId(testid).allInnerTexts();
  const text = async (page: Page, testid: string) => (await page.getByTestId(testid).first().innerText()).trim();

  it("lists a player's store purchases and refunds as the admin API does, and shows the debt", async () => {
    const api = await admin(`/api/v1/admin/players/${ada.id}/store`);
    expect(api.meta).toMatchObject({ purchases: 3, refunds: 3 });
    const player = (await admin(`/api/v1/admin/players/${ada.id}`)).data.attributes;
    expect(player.balances.find((b: { code: string }) => b.code === 'gems').amount).toBe('-385.00');

    const { page, errors, close } = await signedIn(1280);
    await page.goto(`${base}/console/players/${ada.id}`);
    await page.getByTestId('player-store-purchases').waitFor();
    // Newest first, as the API lists them: transaction ids, prices and states.
    type P = { attributes: { transaction_id: string; price: { amount: string; currency: string }; state: string } };
    expect(await texts(page, 'purchase-transaction')).toEqual(api.data.map((p: P) => p.attributes.transaction_id));
    expect(await texts(page, 'purchase-price')).toEqual(api.data.map((p: P) => `${p.attributes.price.amount} ${p.attributes.price.currency}`));
    expect(await texts(page, 'purchase-state')).toEqual(api.data.map((p: P) => p.attributes.state));
    expect((await texts(page, 'purchase-price')).sort()).toEqual(['4.99 USD', '9.99 EUR', '9.99 USD']);
    expect(await texts(page, 'purchase-state')).toEqual(['granted', 'granted', 'refunded']);
    const rows = await page.getByTestId('player-store-purchases').locator('tbody tr').allInnerTexts();
    expect(rows.join('\n')).toContain('google · Production');
    expect(rows.join('\n')).toContain('apple · Sandbox');
    // The refunds: what each took back or gave again.
    expect(await texts(page, 'refund-kind')).toEqual(api.included.map((r: { attributes: { kind: string } }) => r.attributes.kind));
    expect((await texts(page, 'refund-reason')).sort()).toEqual(['REFUND', 'REFUND', 'REFUND_REVERSED']);
    expect((await texts(page, 'refund-effect')).sort()).toEqual([
      'gave again 50 gems, 1000 coins; 2 chests restored',
      'took back 50 gems, 1000 coins; 2 chests revoked where unopened',
      'took back 500 gems',
    ]);
    expect(await page.getByTestId('player-store-refunds').innerText()).toContain('revoke_then_debt');
    // The debt: the balance in red with its mark, and what it blocks said at the top.
    expect(await text(page, 'balance-gems')).toBe('-385.00');
    expect(await page.getByTestId('balance-gems').evaluate((el) => getComputedStyle(el).color)).toBe('rgb(214, 39, 40)');
    expect(await text(page, 'debt-gems')).toBe('385.00 gems');
    expect(await text(page, 'notice-warning')).toContain('every spend of it is refused');
    expect(await page.getByTestId('debt-coins').count()).toBe(0);
    expect(await page.evaluate(layoutProblems)).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'player-store-desktop.png'), fullPage: true });
    expect(errors).toEqual([]);
    await close();
  });

  it('shows a player without store purchases or debt as such', async () => {
    const bob = await newPlayer(s);
    const { page, errors, close } = await signedIn(390);
    await page.goto(`${base}/console/players/${bob.id}`);
    await page.getByTestId('player-id').waitFor();
    expect(await page.getByText('No App Store or Google Play purchases.').count()).toBe(1);
    expect(await page.getByTestId('player-store-refunds').count()).toBe(0);
    expect(await page.getByTestId('notice-warning').count()).toBe(0);
    expect(await page.evaluate(layoutProblems)).toEqual([]);
    expect(errors).toEqual([]);
    await close();
  });

  it("lists the products with their purchases, refunds, refund rate and revenue from the navigation, and the Google account's email only", async () => {
    const api = await admin('/api/v1/admin/store/products');
    const { page, errors, close } = await signedIn(1280);
    await page.click('.nav-wide a[href="/console/store"]');
    await page.waitForURL(`${base}/console/store`);
    type Row = { id: string; attributes: { purchases: number; refunded: number } };
    for (const p of api.data as Row[]) {
      expect(Number(await text(page, `purchases-${p.id}`))).toBe(p.attributes.purchases);
      expect(Number(await text(page, `refunded-${p.id}`))).toBe(p.attributes.refunded);
    }
    expect(await text(page, 'purchases-gems-500')).toBe('1');
    expect(await text(page, 'refund-rate-gems-500')).toBe('100 %');
    expect(await text(page, 'revenue-gems-500')).toBe('—');
    expect(await text(page, 'purchases-starter-pack')).toBe('2');
    expect(await text(page, 'refund-rate-starter-pack')).toBe('0 %');
    expect(await text(page, 'revenue-starter-pack')).toBe('9.99 EUR, 9.99 USD');
    expect(await text(page, 'refund-rate-gems-100')).toBe('—');
    expect(await text(page, 'store-purchases')).toBe('3');
    expect(await text(page, 'store-refund-rate')).toBe('33.33 %');
    expect(await text(page, 'google-client-email')).toBe(s.serviceAccount.client_email);
    const html = await page.content();
    expect(html).not.toContain(s.serviceAccount.private_key_id);
    expect(html).not.toContain('PRIVATE KEY');
    expect(await page.evaluate(layoutProblems)).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'store-desktop.png'), fullPage: true });
    expect(errors).toEqual([]);
    await close();

    // An app without a Google key says so.
    const other = await createApp(s.stack);
    const second = await signedIn(390, other.secretKey);
    await second.page.goto(`${base}/console/store`);
    expect(await second.page.getByTestId('google-no-credentials').count()).toBe(1);
    expect(await second.page.getByTestId('google-client-email').count()).toBe(0);
    expect(await text(second.page, 'store-purchases')).toBe('0');
    expect(await second.page.evaluate(layoutProblems)).toEqual([]);
    expect(second.errors).toEqual([]);
    await second.close();
  });

  it("shows the content diff's store changes: products by id naming what changed, and the settings", async () => {
    const next = storeContent((c) => {
      const store = c.store!;
      store.products.find((p) => p.id === 'gems-500')!.grants.currencies = { gems: 550 };
      store.products = store.products.filter((p) => p.id !== 'gems-100');
      store.refunds = { policy: 'debt' };
    });
    const loaded = await s.stack.inject({
      method: 'POST',
      url: '/api/v1/admin/content',
      headers: { apikey: s.secretKey, 'content-type': 'application/json', accept: 'application/vnd.api+json' },
      payload: next,
    });
    expect(loaded.statusCode, loaded.body).toBe(201);
    const version = loaded.json().data.attributes.version as number;
    const diff = (await admin(`/api/v1/admin/content/${version - 1}/diff`)).data.attributes;
    expect(diff.sections).toEqual([
      {
        section: 'store_products',
        added: [],
        removed: ['gems-100'],
        changed: ['gems-500'],
        changed_fields: { 'gems-500': ['grants.currencies.gems'] },
      },
      { section: 'store', added: [], removed: [], changed: ['refunds'], changed_fields: { refunds: ['policy'] } },
    ]);
    const { page, errors, close } = await signedIn(1280);
    await page.goto(`${base}/console/content/${version - 1}/diff`);
    expect(await texts(page, 'diff-section')).toEqual(['Store products', 'Store settings']);
    expect(await text(page, 'diff-changed-store_products')).toBe('gems-500 (grants.currencies.gems)');
    expect(await text(page, 'diff-changed-store')).toBe('refunds (policy)');
    expect(await page.getByTestId('diff').innerText()).toContain('gems-100');
    expect(await page.evaluate(layoutProblems)).toEqual([]);
    expect(errors).toEqual([]);
    await close();
  });

  it('fits every store page in a phone screen', async () => {
    const { page, errors, close } = await signedIn(390);
    for (const [name, path] of [
      ['player-store', `/console/players/${ada.id}`],
      ['store', '/console/store'],
      ['content-diff-store', '/console/content/1/diff'],
    ] as const) {
      const res = await page.goto(`${base}${path}`);
      expect(res?.status(), path).toBe(200);
      expect(await page.evaluate(layoutProblems), `${path} at 390 px`).toEqual([]);
      await page.screenshot({ path: join(SHOTS, `${name}-phone.png`), fullPage: true });
    }
    // The phone's menu leads to the store page.
    await page.locator('.nav-phone summary').click();
    await page.locator('.nav-phone a[href="/console/store"]').click();
    await page.waitForURL(`${base}/console/store`);
    expect(errors).toEqual([]);
    await close();
  });
});
