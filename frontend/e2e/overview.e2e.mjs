// End-to-end check of the first screen against a running server (Django serving dist/).
//
//   E2E_BASE_URL     server root (default http://127.0.0.1:8000)
//   E2E_USER         a user that can sign in
//   E2E_PASSWORD     its password
//   E2E_EXPECT_GPUS  the GPU count the overview must show (the seeded cluster's)
//   E2E_CHROMIUM     browser binary (default /usr/bin/chromium)
//
// Opens /, expects the redirect to /login, signs in, waits for the overview, checks the GPU
// statistic and saves a full-page screenshot to ../test-artifacts/e2e-overview.png.
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const artifacts = resolve(here, '..', '..', 'test-artifacts');
const screenshot = join(artifacts, 'e2e-overview.png');
const failureShot = join(artifacts, 'e2e-overview-failure.png');

const baseUrl = (process.env.E2E_BASE_URL || 'http://127.0.0.1:8000').replace(/\/+$/, '');
const executablePath = process.env.E2E_CHROMIUM || '/usr/bin/chromium';
const TIMEOUT_MS = 20_000;

class CheckFailed extends Error {}

/**
 * @param {unknown} condition
 * @param {string} message
 * @returns {asserts condition}
 */
function check(condition, message) {
  if (!condition) {
    throw new CheckFailed(message);
  }
}

function config() {
  const missing = ['E2E_USER', 'E2E_PASSWORD', 'E2E_EXPECT_GPUS'].filter((k) => !process.env[k]);
  check(missing.length === 0, `missing environment: ${missing.join(', ')}`);
  const expectGpusRaw = process.env.E2E_EXPECT_GPUS ?? '';
  const expectGpus = Number(expectGpusRaw);
  check(
    expectGpusRaw.trim() !== '' && Number.isInteger(expectGpus) && expectGpus >= 0,
    `E2E_EXPECT_GPUS must be a whole number, got ${JSON.stringify(expectGpusRaw)}`,
  );
  return {
    username: process.env.E2E_USER ?? '',
    password: process.env.E2E_PASSWORD ?? '',
    expectGpus,
  };
}

/**
 * @param {import('playwright-core').Page} page
 * @param {{ username: string, password: string, expectGpus: number }} settings
 */
async function run(page, { username, password, expectGpus }) {
  const response = await page.goto(`${baseUrl}/`, { waitUntil: 'domcontentloaded' });
  check(response !== null && response.ok(), `GET ${baseUrl}/ answered ${response?.status()}`);

  await page
    .waitForURL((url) => url.pathname === '/login', { timeout: TIMEOUT_MS })
    .catch(() => {
      throw new CheckFailed(`expected a redirect to /login, stayed at ${page.url()}`);
    });

  await page.locator('#login_username').fill(username);
  await page.locator('#login_password').fill(password);
  await page.locator('button[type="submit"]').click();

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
  check(outcome === 'overview', `after login expected /overview, got ${page.url()}`);

  const gpus = page.getByTestId('stat-gpus');
  await gpus.waitFor({ timeout: TIMEOUT_MS }).catch(() => {
    throw new CheckFailed('the overview did not show the GPU statistic (data-testid=stat-gpus)');
  });
  const shown = Number(await gpus.getAttribute('data-value'));
  const text = (await gpus.innerText()).trim();
  check(shown === expectGpus, `GPU statistic shows ${shown} ("${text}"), expected ${expectGpus}`);

  // The chart is loaded lazily after the numbers; with GPUs registered it must appear.
  if (expectGpus > 0) {
    await page
      .locator('[data-testid="gpu-model-chart"] svg')
      .waitFor({ timeout: TIMEOUT_MS })
      .catch(() => {
        throw new CheckFailed('the GPU-by-model chart did not render');
      });
  } else {
    await page
      .getByTestId('overview-empty')
      .or(page.locator('.ant-empty'))
      .first()
      .waitFor({ timeout: TIMEOUT_MS })
      .catch(() => undefined);
  }
  await page.waitForLoadState('networkidle', { timeout: 5_000 }).catch(() => undefined);
  await page.screenshot({ path: screenshot, fullPage: true });
  return `overview shows ${text} GPUs as expected; screenshot ${screenshot}`;
}

async function main() {
  /** @type {import('playwright-core').Browser | undefined} */
  let browser;
  /** @type {import('playwright-core').Page | undefined} */
  let page;
  /** @type {string[]} */
  const pageErrors = [];
  try {
    const settings = config();
    mkdirSync(artifacts, { recursive: true });
    rmSync(failureShot, { force: true }); // a stale one from an earlier run would mislead
    browser = await chromium.launch({
      executablePath,
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
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const summary = await run(page, settings);
    check(pageErrors.length === 0, `uncaught errors in the page: ${pageErrors.join(' | ')}`);
    console.log(`e2e: ok: ${summary}`);
    console.log('e2e: 1 passed, 0 failed');
    return 0;
  } catch (error) {
    const reason =
      error instanceof CheckFailed
        ? error.message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error);
    console.error(`e2e: FAILED: overview: ${reason}`);
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

process.exitCode = await main();
