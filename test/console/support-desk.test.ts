import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { readContentFile } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../support/stack.js';
import { expectJsonApi } from '../support/jsonapi-schema.js';
import { TEST_PASSWORD } from '../support/register.js';
import { catalogIds, createApp } from '../../services/chests/test/support/chests.js';
import { layoutProblems, signedInConsole } from './support.js';

/**
 * The console as a support desk (docs/console.md, "Players"), in Chromium at 1280 and 390 px:
 * finding players (the newest a page at a time, the start of an email in any case, an id) with no
 * email or part of one in any URL the browser requests; the whole player (declared profile and
 * what the rules assume without it, sessions, purchases as purchases, the mailbox); and each
 * action (grant currency, grant chests, correct the profile, end every session, lock, unlock):
 * asked first on a page of its own, done only once confirmed, its effect seen through the admin
 * API and its audit entry carrying the agent's note. The app's inventories hold two chests, so a
 * granted chest goes to the mailbox. Every page fits its width, without a console error or CSP
 * violation.
 */
const SHOTS = process.env.CONSOLE_SHOTS ?? mkdtempSync(join(tmpdir(), 'console-desk-'));
const WIDTHS = [1280, 390] as const;

describe('console: the support desk', () => {
  let stack: TestStack;
  let base: string;
  let browser: Browser;
  let game: { appId: string; publishableKey: string; secretKey: string };
  const run = randomUUID().slice(0, 8);
  /** Every URL the browser requested, across the tests: none may hold an email or a searched prefix. */
  const urls: string[] = [];
  /** The desk's players: one per width, who buys a chest, and the crowd that fills two pages. */
  const players: Record<number, { id: string; email: string; token: string; refresh: string }> = {};

  const register = async (email: string) => {
    const res = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/register',
      headers: jsonApiHeaders(game.publishableKey),
      payload: { data: { type: 'player', attributes: { email, password: TEST_PASSWORD, password_confirmation: TEST_PASSWORD }, relationships: {} } },
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    return { id: body.data.id as string, email, token: body.meta.access_token as string, refresh: body.meta.refresh_token as string };
  };
  const admin = async (url: string) => {
    const res = await stack.inject({ method: 'GET', url, headers: { apikey: game.secretKey, accept: 'application/vnd.api+json' } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    return body;
  };
  const playerApi = async (id: string) => (await admin(`/api/v1/admin/players/${id}`)).data.attributes;

  beforeAll(async () => {
    stack = await startStack();
    await stack.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(stack.app.server.address() as AddressInfo).port}`;
    const content = readContentFile();
    content.players.inventory_capacity = 2;
    game = await createApp(stack, content);
    // 22 players whose emails share a prefix (two pages of 20), then one per width, the newest.
    for (let i = 0; i < 22; i++) await register(`desk-${run}-${String(i).padStart(2, '0')}@example.com`);
    for (const width of WIDTHS) players[width] = await register(`Agent.Case.${width}.${run}@Example.com`);
    // Each buys a Silver Chest with coins: with the starter chest, the inventory of two is full.
    const silver = (await catalogIds(stack, game.publishableKey))['Silver Chest']!;
    for (const width of WIDTHS) {
      const bought = await stack.inject({
        method: 'POST',
        url: `/api/v1/chests/${silver}/purchase`,
        headers: jsonApiHeaders(game.publishableKey, players[width]!.token),
        payload: { data: { type: 'purchase', attributes: { currency: 'coins' } } },
      });
      expect(bought.statusCode, bought.body).toBe(201);
    }
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
    console.info(`console support desk screenshots: ${SHOTS}`);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  /** A console signed in at `width`, every request's URL recorded. */
  async function desk(width: number) {
    const c = await signedInConsole(browser, base, game.secretKey, width);
    c.page.on('request', (r) => urls.push(r.url()));
    return c;
  }
  const text = async (page: Page, testid: string) => (await page.getByTestId(testid).first().innerText()).trim();
  const fits = async (page: Page, what: string, width: number) => {
    expect(await page.evaluate(layoutProblems), `${what} at ${width} px`).toEqual([]);
    await page.screenshot({ path: join(SHOTS, `${what}-${width}.png`), fullPage: true });
  };

  for (const width of WIDTHS) {
    it(`finds players at ${width} px: the newest a page at a time, the start of an email in any case, an id`, async () => {
      const { page, errors, close } = await desk(width);
      await page.goto(`${base}/console/players`);
      expect((await page.getByTestId('player-link').allInnerTexts()).slice(0, 2)).toEqual([players[390]!.email, players[1280]!.email]);
      expect(await text(page, 'players-total')).toBe('24 players');
      await fits(page, 'players', width);
      await page.getByTestId('page-next').click();
      await page.waitForURL(`${base}/console/players?offset=20`);
      expect(await page.getByTestId('player-link').count()).toBe(4);

      // The start of an email, in another case: posted, kept in the session, its results paged.
      await page.getByTestId('player-search').locator('input').fill(`DESK-${run}-`);
      await page.getByTestId('player-search').locator('button').click();
      await page.waitForURL(`${base}/console/players/search`);
      expect(await page.getByTestId('player-link').allInnerTexts()).toEqual(
        Array.from({ length: 20 }, (_, i) => `desk-${run}-${String(i).padStart(2, '0')}@example.com`),
      );
      expect(await text(page, 'players-total')).toBe('22 players');
      await fits(page, 'players-found', width);
      await page.getByTestId('page-next').click();
      await page.waitForURL(`${base}/console/players/search?offset=20`);
      expect(await page.getByTestId('player-link').allInnerTexts()).toEqual([`desk-${run}-20@example.com`, `desk-${run}-21@example.com`]);
      await page.getByTestId('page-prev').click();
      await page.waitForURL(`${base}/console/players/search?offset=0`);

      // Another app's players are never found; nothing found says so.
      await page.getByTestId('player-search').locator('input').fill(`nobody-${run}`);
      await page.getByTestId('player-search').locator('button').click();
      await page.waitForURL(`${base}/console/players/search`);
      expect(await text(page, 'notice-empty')).toBe('No players found.');

      // An id goes straight to the player's page.
      await page.getByTestId('player-search').locator('input').fill(players[width]!.id.toUpperCase());
      await page.getByTestId('player-search').locator('button').click();
      await page.waitForURL(`${base}/console/players/${players[width]!.id}`);
      expect(await text(page, 'player-id')).toBe(players[width]!.id);
      expect(errors).toEqual([]);
      await close();
    });

    it(`shows the whole player at ${width} px: declared profile and what the rules assume, sessions, purchases, mailbox`, async () => {
      const p = players[width]!;
      const api = await playerApi(p.id);
      const { page, errors, close } = await desk(width);
      await page.goto(`${base}/console/players/${p.id}`);
      expect(await text(page, 'player-country')).toBe('not declared');
      expect(await text(page, 'player-birth-year')).toBe('not declared');
      const assumptions = await page.getByTestId('assumption').allInnerTexts();
      expect(assumptions).toHaveLength(api.profile_assumptions.length);
      expect(assumptions).toContain(
        'No birth year or country declared: the CN pack (no_store_payments_under_8) treats the player as under 8 in CN for store payments: none allowed.',
      );
      expect(assumptions.some((a) => a.startsWith("No birth year declared: the content's rules treat the player as under 18"))).toBe(true);
      // Purchases as purchases: the chest bought, what it cost, its state.
      expect(await page.getByTestId('purchase-bought').allInnerTexts()).toEqual(['1 × Silver Chest']);
      expect(await page.getByTestId('purchase-paid').allInnerTexts()).toEqual([`${api.purchases.latest[0].amount} coins`]);
      expect(await page.getByTestId('purchase-status').allInnerTexts()).toEqual(['completed']);
      expect(Number(await text(page, 'sessions-active'))).toBe(api.sessions.active);
      expect(await page.getByTestId('session-state').allInnerTexts()).toEqual(['active']);
      expect(await page.getByText('Nothing waiting in the mailbox.').count()).toBe(1);
      await fits(page, 'player-whole', width);
      expect(errors).toEqual([]);
      await close();
    });

    it(`acts on a player at ${width} px, each action asked first and recorded with its note`, { timeout: 180_000 }, async () => {
      const p = players[width]!;
      const { page, errors, close } = await desk(width);
      const note = (action: string) => `Ticket ${width}-${action}: ${run}`;
      /** Opens the action's form, fills it and its note, submits it: the question's page, nothing done yet. */
      const ask = async (action: string, fill: (form: ReturnType<Page['getByTestId']>) => Promise<void> = async () => undefined) => {
        await page.goto(`${base}/console/players/${p.id}`);
        await page.getByTestId(`action-${action}`).locator('summary').click();
        const form = page.getByTestId(`form-${action}`);
        await fill(form);
        await form.locator('textarea[name=note]').fill(note(action));
        await fits(page, `form-${action}`, width);
        await form.locator('button[type=submit]').click();
        await page.getByTestId('confirm-question').waitFor();
        expect(await text(page, 'confirm-note')).toBe(note(action));
        await fits(page, `confirm-${action}`, width);
        return text(page, 'confirm-question');
      };
      /** Confirms the question: back on the player's page, saying it is done. */
      const confirm = async () => {
        await page.getByTestId('confirm-action').locator('button').click();
        await page.waitForURL(new RegExp(`/console/players/${p.id}\\?done=`));
        return text(page, 'action-done');
      };

      // Grant currency: asked (nothing granted), then granted.
      const gems = async () => (await playerApi(p.id)).balances.find((b: { code: string }) => b.code === 'gems').amount as string;
      const before = Number(await gems());
      expect(
        await ask('credit', async (f) => {
          await f.locator('select[name=currency]').selectOption('gems');
          await f.locator('input[name=amount]').fill('25');
          await f.locator('input[name=reference]').fill(`desk-${width}-${run}`);
        }),
      ).toContain('Grant 25 gems to');
      expect(Number(await gems())).toBe(before);
      expect(await confirm()).toContain('Currency granted');
      expect(Number(await gems())).toBe(before + 25);
      expect(await text(page, 'balance-gems')).toBe(await gems());
      await fits(page, 'player-after-credit', width);

      // Grant chests: the inventory is full, so the chest waits in the mailbox.
      expect(
        await ask('chests', async (f) => {
          await f.locator('select[name=chest_type]').selectOption({ label: 'Golden Chest' });
          await f.locator('input[name=reference]').fill(`desk-chests-${width}-${run}`);
        }),
      ).toContain('Grant 1 × Golden Chest to');
      expect(await confirm()).toContain('Chests granted');
      await eventually(async () => expect((await playerApi(p.id)).mailbox.total).toBe(1));
      await page.reload();
      expect(await page.getByTestId('mailbox-chest').allInnerTexts()).toEqual(['Golden Chest']);

      // Correct the declared profile: then nothing is assumed any more.
      expect(
        await ask('profile', async (f) => {
          await f.locator('input[name=country]').fill('de');
          await f.locator('input[name=birth_year]').fill('1990');
        }),
      ).toContain('Set the declared country of');
      expect(await confirm()).toContain('Declared profile corrected');
      expect([(await playerApi(p.id)).country, (await playerApi(p.id)).birth_year]).toEqual(['DE', 1990]);
      expect(await text(page, 'player-country')).toBe('DE');
      expect(await page.getByTestId('assumption').count()).toBe(0);

      // End every session: the refresh token is refused after.
      expect(await ask('sessions')).toContain('End every session of');
      expect(await confirm()).toContain('Every session ended');
      expect((await playerApi(p.id)).sessions.active).toBe(0);
      const refreshed = await stack.inject({
        method: 'POST',
        url: '/api/v1/players/refresh',
        headers: jsonApiHeaders(game.publishableKey),
        payload: { data: { type: 'session', attributes: { refresh_token: p.refresh } } },
      });
      expect(refreshed.statusCode, refreshed.body).toBe(401);

      // Lock: the token is refused at once; the page says so and offers the unlock.
      const me = () => stack.inject({ method: 'GET', url: '/api/v1/players/me', headers: jsonApiHeaders(game.publishableKey, p.token) });
      expect((await me()).statusCode).toBe(200);
      expect(await ask('lock')).toContain('Lock');
      expect((await me()).statusCode).toBe(200);
      expect(await confirm()).toContain('Player locked');
      expect((await me()).json().errors[0].code).toBe('player_locked');
      expect(await text(page, 'player-locked')).toBe('Locked');
      await fits(page, 'player-locked', width);
      expect(await ask('unlock')).toContain('Unlock');
      expect(await confirm()).toContain('Player unlocked');
      expect((await me()).statusCode).toBe(200);

      // The audit log: each action with its note, newest first; on its page too.
      await eventually(async () => {
        const entries = (await admin('/api/v1/admin/audit?page[limit]=100')).data
          .map((e: { attributes: { action: string; target: string; note: string | null } }) => e.attributes)
          .filter((e: { target: string }) => e.target === p.id);
        expect(entries.map((e: { action: string; note: string | null }) => [e.action, e.note])).toEqual([
          ['POST /api/v1/admin/players/{id}/unlock', note('unlock')],
          ['POST /api/v1/admin/players/{id}/lock', note('lock')],
          ['POST /api/v1/admin/players/{id}/sessions/revoke', note('sessions')],
          ['PATCH /api/v1/admin/players/{id}', note('profile')],
          ['POST /api/v1/admin/players/{id}/chests', note('chests')],
          ['POST /api/v1/admin/players/{id}/credits', note('credit')],
        ]);
      });
      await page.goto(`${base}/console/audit`);
      const shown = await page.getByTestId('audit-note').allInnerTexts();
      for (const action of ['credit', 'chests', 'profile', 'sessions', 'lock', 'unlock']) expect(shown).toContain(note(action));
      await fits(page, 'audit', width);
      expect(errors).toEqual([]);
      await close();
    });
  }

  it('acts only when confirmed, and only with a note, whatever posts the form', async () => {
    const p = players[1280]!;
    const { page, errors, close } = await desk(1280);
    const post = (form: Record<string, string>) =>
      page.context().request.post(`${base}/console/players/${p.id}/actions/lock`, { headers: { origin: base }, form });
    const locked = async () => (await playerApi(p.id)).locked_at;
    // Without `confirm`, or with another action's name, it only asks.
    expect((await post({ note: 'n' })).status()).toBe(200);
    expect((await post({ note: 'n', confirm: 'unlock' })).status()).toBe(200);
    expect(await locked()).toBeNull();
    // Without a note it refuses, confirmed or not.
    const noNote = await post({ confirm: 'lock' });
    expect(await noNote.text()).toContain('Write a note for the audit log');
    expect(await locked()).toBeNull();
    // From the question, "Back to the player" changes nothing.
    await page.goto(`${base}/console/players/${p.id}`);
    await page.getByTestId('action-lock').locator('summary').click();
    await page.getByTestId('form-lock').locator('textarea').fill('not now');
    await page.getByTestId('form-lock').locator('button').click();
    await page.getByTestId('cancel-action').click();
    await page.waitForURL(`${base}/console/players/${p.id}`);
    expect(await locked()).toBeNull();
    // A refusal of the API shows its words over the question again (a reference reused for another amount).
    await page.getByTestId('action-credit').locator('summary').click();
    const form = page.getByTestId('form-credit');
    await form.locator('select[name=currency]').selectOption('gems');
    await form.locator('input[name=amount]').fill('26');
    await form.locator('input[name=reference]').fill(`desk-1280-${run}`);
    await form.locator('textarea').fill('again');
    await form.locator('button').click();
    await page.getByTestId('confirm-action').locator('button').click();
    expect(await text(page, 'notice-error')).toContain('This reference was already used for a different grant');
    expect(await text(page, 'confirm-question')).toContain('Grant 26 gems to');
    expect(errors.filter((e) => !/status of 409/.test(e))).toEqual([]);
    await close();
  });

  it('never put an email, or the start of one, in a URL the browser requested', () => {
    expect(urls.length).toBeGreaterThan(50);
    const leaks = urls.filter((u) => {
      const url = decodeURIComponent(u).toLowerCase();
      return url.includes('@') || url.includes(`desk-${run}`) || url.includes('agent.case');
    });
    expect(leaks).toEqual([]);
  });
});
