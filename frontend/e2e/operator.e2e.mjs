// Operator (admin): edits a quota beyond the pool's capacity and sees the server's validation
// error on the field; acknowledges an alert if any exist, else views the health page; opens
// the GPU heatmap. E2E_OPERATOR overrides the user.
import { check, expectVisible, login, runScenario, screenshot } from './lib.mjs';

const user = process.env.E2E_OPERATOR || 'admin';
const password = process.env.E2E_PASSWORD ?? '';

process.exitCode = await runScenario('operator', async (page) => {
  await login(page, user, password);
  await page.getByRole('link', { name: 'Quotas & Pools' }).click();
  const consoleCard = page.getByTestId('quota-console');
  await expectVisible(consoleCard.locator('tbody tr.ant-table-row'), 'the quota console');
  const input = consoleCard.locator('input[data-testid$="-guarantee"]').first();
  const testId = await input.getAttribute('data-testid');
  const id = (testId ?? '').split('-')[1];
  await input.fill('100000');
  await page.getByTestId(`quota-${id}-save`).click();
  const error = page.getByTestId(`quota-${id}-guarantee-error`);
  await expectVisible(error, 'the validation error under the guarantee field');
  const text = (await error.innerText()).trim();
  check(/but the pool has/.test(text), `unexpected validation message: ${text}`);
  const quotaShot = await screenshot(page, 'operator-quota-error');

  await page.getByRole('link', { name: 'Health' }).click();
  const inbox = page.getByTestId('alert-inbox');
  await expectVisible(inbox.locator('tbody tr'), 'the alert inbox');
  await expectVisible(page.getByTestId('node-grid'), 'the node health grid');
  let acknowledged = 'no alerts to acknowledge';
  const ack = inbox.locator('[data-testid^="ack-"]');
  if ((await ack.count()) > 0) {
    await ack.first().click();
    await expectVisible(page.getByText('Alert acknowledged'), 'the acknowledgement message');
    acknowledged = 'acknowledged one alert';
  }
  await screenshot(page, 'operator-health');

  await page.getByRole('link', { name: 'Cluster' }).click();
  await expectVisible(page.locator('[data-testid="gpu-heatmap"] canvas'), 'the GPU heatmap');
  await screenshot(page, 'operator-cluster');
  return `validation error shown ("${text}"); ${acknowledged}; screenshot ${quotaShot}`;
});
