// What every browser scenario shares: Debian's Chromium driven by playwright-core (which cannot
// download a browser of its own here), the app's address from SEATCLAIM_URL, waits on conditions
// with a deadline (never a fixed sleep), and a failure report that says what the page showed.

import { chromium } from 'playwright-core';

/** The Chromium the install step puts there (tests/browser/install.sh). */
const CHROMIUM = process.env.SEATCLAIM_CHROMIUM ?? '/usr/bin/chromium';
/** How long one wait may take before the scenario fails: generous, as the emulator is slow, and
 * slower still while the AWS suite's other tests load it at once (a wait ends as soon as its
 * condition holds, so a passing run takes no longer). */
export const WAIT_MS = Number(process.env.SEATCLAIM_BROWSER_WAIT_MS ?? 60_000);
/** A scenario that runs longer than this is stuck: it fails rather than hang the Rust test. */
const SCENARIO_MS = 180_000;

/** A required environment variable. @param {string} name */
export function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** The app under test, e.g. http://127.0.0.1:41234. */
export const base = () => env('SEATCLAIM_URL');

/**
 * Runs one scenario with a fresh browser and exits 0 if it passes, 1 with the reason if not.
 * Errors thrown by the page itself fail the scenario too.
 * @param {string} name
 * @param {(t: {browser: import('playwright-core').Browser, open: (path: string) => Promise<import('playwright-core').Page>}) => Promise<void>} body
 */
export async function scenario(name, body) {
  const watchdog = setTimeout(() => {
    console.error(`${name}: still running after ${SCENARIO_MS} ms; giving up`);
    process.exit(1);
  }, SCENARIO_MS);
  watchdog.unref();
  const started = Date.now();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  /** @type {import('playwright-core').Page[]} */
  const pages = [];
  const pageErrors = [];
  const open = async (/** @type {string} */ path) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    page.on('pageerror', (error) => pageErrors.push(`${page.url()}: ${error.message}`));
    page.on('console', (msg) => msg.type() === 'error' && console.error(`console: ${msg.text()}`));
    pages.push(page);
    await page.goto(base() + path);
    return page;
  };
  let code = 0;
  try {
    await body({ browser, open });
    if (pageErrors.length) throw new Error(`the page threw: ${pageErrors.join('; ')}`);
    console.log(`ok: ${name} (${Date.now() - started} ms)`);
  } catch (error) {
    code = 1;
    console.error(`FAILED: ${name}: ${error instanceof Error ? error.stack : error}`);
    for (const page of pages) console.error(await describe(page));
  } finally {
    await browser.close();
  }
  process.exit(code);
}

/** What a page shows, for a failure report. @param {import('playwright-core').Page} page */
async function describe(page) {
  try {
    return await page.evaluate(() => {
      const status = document.querySelector('[data-job-status]');
      const seats = [...document.querySelectorAll('[data-seat-id]')]
        .map((s) => `${s.getAttribute('data-seat-id')}=${s.getAttribute('data-state')}${s.getAttribute('aria-pressed') === 'true' ? '*' : ''}`);
      return [
        `page ${location.href}`,
        `  status: ${status?.textContent ?? '(none)'} job ${status?.getAttribute('data-job-id') ?? ''}`,
        `  visible text: ${document.body.innerText.replace(/\s+/g, ' ').slice(0, 600)}`,
        `  seats: ${seats.join(' ')}`,
        `  localStorage: ${JSON.stringify({ ...localStorage })}`,
      ].join('\n');
    });
  } catch (error) {
    return `page ${page.url()}: cannot be read (${error})`;
  }
}

/**
 * Polls `check` until it returns something truthy, and returns that; fails naming `what` after
 * `within` ms.
 * @template T
 * @param {string} what
 * @param {() => Promise<T> | T} check
 * @param {number} [within]
 * @returns {Promise<T>}
 */
export async function until(what, check, within = WAIT_MS) {
  const deadline = Date.now() + within;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`waited ${within} ms for ${what}, in vain (last: ${last})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until the reservation's status reads `expected`. @param {import('playwright-core').Page} page @param {string} expected @param {number} [within] */
export async function jobStatus(page, expected, within = WAIT_MS) {
  try {
    await until(`the reservation to show ${expected}`, async () => (await statusText(page)) === expected, within);
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : error}; it shows ${JSON.stringify(await statusText(page))}`);
  }
}

/** @param {import('playwright-core').Page} page */
export const statusText = (page) => page.locator('[data-job-status]').textContent({ timeout: 1000 });

/** Waits until a seat's data-state reads `state`. @param {import('playwright-core').Page} page @param {string} id @param {string} state */
export async function seatState(page, id, state) {
  await page.locator(`[data-seat-id="${id}"][data-state="${state}"]`).waitFor({ state: 'attached' });
}

/** The hold countdown in seconds ("4:59" is 299), or NaN. @param {import('playwright-core').Page} page */
export async function countdown(page) {
  const text = (await page.locator('[data-hold-countdown]').textContent()) ?? '';
  const match = /^(\d+):(\d\d)$/.exec(text.trim());
  return match ? Number(match[1]) * 60 + Number(match[2]) : NaN;
}

/** Gives the buyer name the page asks for when authentication is off. @param {import('playwright-core').Page} page @param {string} buyer */
export async function nameBuyer(page, buyer) {
  await page.locator('[data-field="buyer"]').fill(buyer);
}

/**
 * Clicks seats and checks each reads as selected. A click that lands while the page is still
 * rendering the seat map (the button it hit is replaced) is lost, so a seat that is still not
 * pressed two seconds after a click is clicked again, up to the usual wait.
 * @param {import('playwright-core').Page} page @param {string[]} ids
 */
export async function select(page, ids) {
  for (const id of ids) {
    const seat = page.locator(`[data-seat-id="${id}"]`);
    const pressed = async () => (await seat.getAttribute('aria-pressed')) === 'true';
    await until(`seat ${id} to be pressed`, async () => {
      if (await pressed()) return true;
      await seat.click();
      try {
        return await until(`seat ${id} to take the click`, pressed, 2000);
      } catch {
        return false;
      }
    });
  }
}

/**
 * Calls the API directly (as another buyer would), returning status and JSON body.
 * @param {string} path
 * @param {{method?: string, body?: unknown, headers?: Record<string, string>}} [options]
 */
export async function api(path, { method = 'GET', body, headers = {} } = {}) {
  const response = await fetch(base() + path, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** Fails with `message` unless `condition`. @param {unknown} condition @param {string} message */
export function assert(condition, message) {
  if (!condition) throw new Error(message);
}
