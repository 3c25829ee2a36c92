// Shared helpers for the persona end-to-end scripts (see overview.e2e.mjs for the pattern).
//
//   E2E_BASE_URL   server root (default http://127.0.0.1:8000)
//   E2E_PASSWORD   password of the demo users
//   E2E_CHROMIUM   browser binary (default /usr/bin/chromium)
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const artifacts = resolve(here, '..', '..', 'test-artifacts');
export const baseUrl = (process.env.E2E_BASE_URL || 'http://127.0.0.1:8000').replace(/\/+$/, '');
export const TIMEOUT_MS = 20_000;

export class CheckFailed extends Error {}

/** Headless Chromium as every browser script here runs it (Debian's build, no GPU, offline). */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.E2E_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/**
 * @param {unknown} condition
 * @param {string} message
 * @returns {asserts condition}
 */
export function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

/**
 * Waits for a locator, failing with a readable message.
 * @param {import('playwright-core').Locator} locator
 * @param {string} what
 * @param {number} [timeout]
 */
export async function expectVisible(locator, what, timeout = TIMEOUT_MS) {
  await locator
    .first()
    .waitFor({ timeout })
    .catch(() => {
      throw new CheckFailed(`${what} did not appear`);
    });
}

/**
 * @param {import('playwright-core').Page} page
 * @param {string} username
 * @param {string} password
 */
export async function login(page, username, password) {
  await page.goto(`${baseUrl}/login`, { waitUntil: 'domcontentloaded' });
  await page.locator('#login_username').fill(username);
  await page.locator('#login_password').fill(password);
  await page.locator('button[type="submit"]').click();
  // Either the overview opens or the form shows why not (wrong password, server error).
  const outcome = await Promise.race([
    page
      .waitForURL((url) => url.pathname === '/overview', { timeout: TIMEOUT_MS })
      .then(() => 'overview'),
    page
      .locator('.ant-alert-error')
      .waitFor({ timeout: TIMEOUT_MS })
      .then(() => 'error'),
  ]).catch(() => 'timeout');
  if (outcome === 'error') {
    const text = await page.locator('.ant-alert-error').innerText();
    throw new CheckFailed(`login failed for ${username}: ${text.trim()}`);
  }
  check(outcome === 'overview', `login as ${username} did not reach /overview (at ${page.url()})`);
}

/**
 * Runs one persona flow in a fresh browser and prints `e2e: N passed, M failed`.
 * @param {string} name
 * @param {(page: import('playwright-core').Page) => Promise<string>} flow
 */
export async function runScenario(name, flow) {
  const failureShot = join(artifacts, `e2e-${name}-failure.png`);
  /** @type {import('playwright-core').Browser | undefined} */
  let browser;
  /** @type {import('playwright-core').Page | undefined} */
  let page;
  /** @type {string[]} */
  const pageErrors = [];
  try {
    check(process.env.E2E_PASSWORD, 'missing environment: E2E_PASSWORD');
    mkdirSync(artifacts, { recursive: true });
    rmSync(failureShot, { force: true });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const summary = await flow(page);
    check(pageErrors.length === 0, `uncaught errors in the page: ${pageErrors.join(' | ')}`);
    console.log(`e2e: ok: ${name}: ${summary}`);
    console.log('e2e: 1 passed, 0 failed');
    return 0;
  } catch (error) {
    const reason =
      error instanceof CheckFailed
        ? error.message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error);
    console.error(`e2e: FAILED: ${name}: ${reason}`);
    if (page) {
      await page.screenshot({ path: failureShot, fullPage: true }).catch(() => undefined);
      console.error(`e2e: page was at ${page.url()}; screenshot ${failureShot}`);
    }
    console.log('e2e: 0 passed, 1 failed');
    return 1;
  } finally {
    await browser?.close().catch(() => undefined);
  }
}

/**
 * Calls the API as the signed-in browser user (session cookie + CSRF header), or with a
 * bearer token instead; for test setup and clean-up that has no screen of its own.
 * @param {import('playwright-core').Page} page
 * @param {string} method
 * @param {string} path e.g. `/api/v1/health/nodes/`
 * @param {{ data?: unknown, token?: string }} [options]
 * @returns {Promise<any>}
 */
export async function apiCall(page, method, path, { data, token } = {}) {
  const cookies = await page.context().cookies(baseUrl);
  const csrf = cookies.find((c) => c.name === 'csrftoken')?.value ?? '';
  /** @type {Record<string, string>} */
  const headers = token
    ? { Authorization: `Bearer ${token}` }
    : { 'X-CSRFToken': csrf, Referer: `${baseUrl}/` };
  const response = await page.request.fetch(`${baseUrl}${path}`, { method, data, headers });
  const text = await response.text();
  // Django's error pages are HTML: their <title> says what went wrong.
  const title = /<title>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
  check(
    response.ok(),
    `${method} ${path} answered ${response.status()}: ${title ?? text.slice(0, 300)}`,
  );
  return text === '' ? null : JSON.parse(text);
}

/**
 * Opens an antd Select (found by its combobox's accessible name) and clicks an option of
 * *its own* dropdown: the one holding the listbox the combobox controls. A `:visible`
 * dropdown is not enough: the previous Select's may still be closing, and an option
 * resolved in it turns hidden under the click.
 * @param {import('playwright-core').Page} page
 * @param {string} name the combobox's accessible name (its form label)
 * @param {string} [option] more of the option's selector, e.g. `[title^="A800"]`; the first
 *   option when empty
 */
export async function pickOption(page, name, option = '') {
  await page.getByRole('combobox', { name }).click();
  // It names its listbox once open.
  const open = page.getByRole('combobox', { name, expanded: true });
  await expectVisible(open, `the ${name} select open`);
  const list = await open.getAttribute('aria-controls');
  check(list, `the ${name} select names no listbox`);
  await page
    .locator('.ant-select-dropdown', { has: page.locator(`[id="${list}"]`) })
    .locator(`.ant-select-item-option${option}`)
    .first()
    .click();
}

/**
 * @param {import('playwright-core').Page} page
 * @param {string} name
 */
export async function screenshot(page, name) {
  await page.waitForLoadState('networkidle', { timeout: 5_000 }).catch(() => undefined);
  const path = join(artifacts, `e2e-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
