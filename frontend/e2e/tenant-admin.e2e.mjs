// Tenant admin (alice, vision): sees her tenant's quota and usage, and the pools' queues;
// changes a member's role and finds the change in the audit log.
// E2E_TENANT_ADMIN overrides the user.
import { check, expectVisible, login, pickOption, runScenario, screenshot } from './lib.mjs';

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

  // A role change, then the audit log shows who made it and what it changed (put back after).
  await setRole(page, 'victor', 'Member');
  // The log is read when its tab opens, so the change is in it.
  await page.getByRole('tab', { name: 'Audit log' }).click();
  const audit = page.getByTestId('audit-table');
  const change = audit.locator('tr.ant-table-row', { hasText: 'in vision as member' }).first();
  await expectVisible(change, 'the role change in the audit log');
  check((await change.innerText()).includes(user), `the audit entry does not name ${user}`);
  await change.locator('.ant-table-row-expand-icon').click();
  const fields = await audit.locator('[data-testid^="audit-changes-"]').first().innerText();
  check(/role\s+viewer\s+member/.test(fields), `the entry's changes read: ${fields}`);
  const auditShot = await screenshot(page, 'tenant-admin-audit');
  await page.getByRole('tab', { name: 'Members and roles' }).click();
  await setRole(page, 'victor', 'Viewer');

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
  return `${rows} quota rows shown; a role change found in the audit log; usage page and CSV export checked; screenshots ${path}, ${auditShot}`;
});

/**
 * Picks a member's role in the members table and waits for the server to take it.
 * @param {import('playwright-core').Page} page
 * @param {string} username
 * @param {string} role the option's label
 */
async function setRole(page, username, role) {
  const saved = page.waitForResponse(
    (r) => r.request().method() === 'PATCH' && r.url().includes('/members/'),
  );
  await pickOption(page, `Role of ${username}`, `[title="${role}"]`);
  const answer = await saved;
  check(answer.ok(), `changing the role of ${username} answered ${answer.status()}`);
}
