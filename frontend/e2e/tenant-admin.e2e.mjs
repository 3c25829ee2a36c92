// Tenant admin (alice, vision): sees her tenant's quota and usage, and the pools' queues.
// E2E_TENANT_ADMIN overrides the user.
import { check, expectVisible, login, runScenario, screenshot } from './lib.mjs';

const user = process.env.E2E_TENANT_ADMIN || 'alice';
const password = process.env.E2E_PASSWORD ?? '';

process.exitCode = await runScenario('tenant-admin', async (page) => {
  await login(page, user, password);
  await page.getByRole('link', { name: 'Quotas & Pools' }).click();
  const quotas = page.getByTestId('tenant-quotas');
  await expectVisible(quotas.getByText('Quotas of Vision Lab'), 'the tenant quota card');
  await expectVisible(
    quotas.locator('tbody tr td', { hasText: 'a800-train' }),
    'the A800 quota row',
  );
  const rows = await quotas.locator('tbody tr.ant-table-row').count();
  check(rows >= 1, `expected quota rows, got ${rows}`);
  await expectVisible(page.getByTestId('pool-queue'), 'the pool queue');
  check(
    (await page.getByTestId('quota-console').count()) === 0,
    'a tenant admin must not see the quota console',
  );
  const path = await screenshot(page, 'tenant-admin-quotas');
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('tab', { name: 'Members and roles' }).click();
  await expectVisible(page.getByTestId('members-table').getByText('bob'), 'the members table');
  await screenshot(page, 'tenant-admin-members');

  // Usage and cost of the tenant, with the CSV export the page links to.
  await page.getByRole('link', { name: 'Usage & Cost' }).click();
  await expectVisible(page.getByTestId('usage-table'), 'the usage table');
  await expectVisible(page.getByTestId('usage-chart'), 'the usage chart');
  check(
    (await page.getByTestId('usage-scope').innerText()).includes('Vision Lab'),
    'usage is scoped to the tenant',
  );
  const csvHref = await page.getByTestId('usage-export').getAttribute('href');
  check(csvHref, 'an Export CSV link');
  const csv = await page.request.get(new URL(csvHref ?? '', page.url()).toString());
  check(csv.ok(), `CSV export answered ${csv.status()}`);
  check(/text\/csv/.test(csv.headers()['content-type'] ?? ''), 'the export is CSV');
  await screenshot(page, 'tenant-admin-usage');
  return `${rows} quota rows shown; usage page and CSV export checked; screenshot ${path}`;
});
