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
  return `${rows} quota rows shown; screenshot ${path}`;
});
