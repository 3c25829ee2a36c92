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
import {
  baseUrl,
  check,
  CheckFailed,
  expectVisible,
  login,
  runScenario,
  screenshot,
  TIMEOUT_MS,
} from './lib.mjs';

function config() {
  const missing = ['E2E_USER', 'E2E_EXPECT_GPUS'].filter((k) => !process.env[k]);
  check(missing.length === 0, `missing environment: ${missing.join(', ')}`);
  const expectGpusRaw = process.env.E2E_EXPECT_GPUS ?? '';
  const expectGpus = Number(expectGpusRaw);
  check(
    expectGpusRaw.trim() !== '' && Number.isInteger(expectGpus) && expectGpus >= 0,
    `E2E_EXPECT_GPUS must be a whole number, got ${JSON.stringify(expectGpusRaw)}`,
  );
  return { username: process.env.E2E_USER ?? '', expectGpus };
}

process.exitCode = await runScenario('overview', async (page) => {
  const { username, expectGpus } = config();
  const response = await page.goto(`${baseUrl}/`, { waitUntil: 'domcontentloaded' });
  check(response !== null && response.ok(), `GET ${baseUrl}/ answered ${response?.status()}`);
  await page
    .waitForURL((url) => url.pathname === '/login', { timeout: TIMEOUT_MS })
    .catch(() => {
      throw new CheckFailed(`expected a redirect to /login, stayed at ${page.url()}`);
    });

  await login(page, username, process.env.E2E_PASSWORD ?? '');

  const gpus = page.getByTestId('stat-gpus');
  await expectVisible(gpus, 'the GPU statistic (data-testid=stat-gpus)');
  const shown = Number(await gpus.getAttribute('data-value'));
  const text = (await gpus.innerText()).trim();
  check(shown === expectGpus, `GPU statistic shows ${shown} ("${text}"), expected ${expectGpus}`);

  // The chart is loaded lazily after the numbers; with GPUs registered it must appear.
  if (expectGpus > 0) {
    await expectVisible(
      page.locator('[data-testid="gpu-model-chart"] svg'),
      'the GPU-by-model chart',
    );
  } else {
    await page
      .getByTestId('overview-empty')
      .or(page.locator('.ant-empty'))
      .first()
      .waitFor({ timeout: TIMEOUT_MS })
      .catch(() => undefined);
  }
  const shot = await screenshot(page, 'overview');
  return `overview shows ${text} GPUs as expected; screenshot ${shot}`;
});
