import type { Browser, Page } from 'playwright-core';

/**
 * What the console's browser tests share (console.test.ts, odds-log.test.ts, banners.test.ts): the
 * page functions they evaluate in Chromium, and signing in with the app's secret key.
 */

/** Reports every CSP violation as a console error, before any of the page's scripts run. */
export const REPORT_CSP = () =>
  document.addEventListener('securitypolicyviolation', (e) =>
    console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber} (${e.sample})`),
  );

/** What a page's layout breaks: anything past the viewport's sides or scrolling sideways, headings out of order, a squeezed chart or header. */
export function layoutProblems(): string[] {
  const vw = window.innerWidth;
  const out: string[] = [];
  const name = (el: Element) =>
    `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.trim().replace(/\s+/g, '.')}` : ''}${
      el.getAttribute('data-testid') ? `[${el.getAttribute('data-testid')}]` : ''
    }`;
  if (document.documentElement.scrollWidth > vw) out.push(`the page is ${document.documentElement.scrollWidth} px wide in ${vw}`);
  for (const el of Array.from(document.body.querySelectorAll('*'))) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.right > vw + 1 || r.left < -1) out.push(`${name(el)} spans ${Math.round(r.left)}..${Math.round(r.right)} px`);
    const cs = getComputedStyle(el);
    if (cs.overflowX !== 'visible' && cs.textOverflow !== 'ellipsis' && el.scrollWidth > el.clientWidth + 1)
      out.push(`${name(el)} hides ${el.scrollWidth - el.clientWidth} px sideways`);
  }
  const size = (el: Element) => parseFloat(getComputedStyle(el).fontSize);
  const title = document.querySelector('main > h1');
  if (!title) out.push('no page title');
  for (const h of Array.from(document.querySelectorAll('main h2, main h3')))
    if (title && size(title) <= size(h)) out.push(`the title (${size(title)} px) is not bigger than "${h.textContent?.trim()}" (${size(h)} px)`);
  // The header is one row: its visible lists (brand, navigation or menu) side by side.
  const rows = new Set(
    Array.from(document.querySelectorAll('header nav > ul'))
      .map((ul) => ul.getBoundingClientRect())
      .filter((r) => r.height > 0)
      .map((r) => Math.round(r.top / 24)),
  );
  if (rows.size > 1) out.push(`the header takes ${rows.size} rows`);
  for (const c of Array.from(document.querySelectorAll('canvas[data-chart]'))) {
    const r = c.getBoundingClientRect();
    if (r.width < Math.min(300, vw * 0.7) || r.height < 200) out.push(`chart ${c.id} is ${Math.round(r.width)}×${Math.round(r.height)} px`);
  }
  return out;
}

/** Whether a chart's canvas is drawn at its size: its bitmap matches its box and has paint on it. */
export function chartPainted(id: string): boolean {
  const canvas = document.getElementById(id) as HTMLCanvasElement | null;
  if (!canvas || canvas.dataset.drawn !== '1') return false;
  if (Math.abs(canvas.width - Math.round(canvas.clientWidth * devicePixelRatio)) > 2) return false;
  const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) painted++;
  return painted > 500;
}

/**
 * A new browser context of `width` px signed in to the console at `base` with `secretKey`; console
 * errors, uncaught page errors and CSP violations are collected in `errors`.
 */
export async function signedInConsole(
  browser: Browser,
  base: string,
  secretKey: string,
  width: number,
): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width, height: 844 } });
  await context.addInitScript(REPORT_CSP);
  const errors: string[] = [];
  const page = await context.newPage();
  page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}/console/sign-in`);
  await page.fill('input[name=secret_key]', secretKey);
  await page.click('form[data-testid=sign-in] button');
  await page.waitForURL(`${base}/console`);
  return { page, errors, close: () => context.close() };
}
