import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, BOB, sessionOf } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';

const ROWS = [
  { key: 'llm', device_hours: 30, cost: '60.00' },
  { key: 'vision', device_hours: 10, cost: '20.00' },
];

function rowTexts(testId: string): string[][] {
  return within(screen.getByTestId(testId))
    .getAllByRole('row')
    .map((row) => Array.from(row.children, (cell) => cell.textContent));
}

describe('usage and cost', () => {
  it('shows a tenant admin their tenant by project: totals, chart per day and CSV link', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tenants/vision/usage/': { status: 200, body: ROWS },
    });
    renderApp('/usage?from=2026-11-01&to=2026-11-03');

    await within(await screen.findByTestId('usage-table')).findByText('llm');
    expect(rowTexts('usage-table')).toEqual([
      ['Project', 'GPU-hours', 'Share', 'Cost'],
      // Amounts carry the server's currency (the session says CNY).
      ['llm', '30', '75%', 'CN¥60.00'],
      ['vision', '10', '25%', 'CN¥20.00'],
    ]);
    expect(screen.getByTestId('usage-total-hours').textContent).toContain('40');
    expect(screen.getByTestId('usage-total-cost').textContent).toBe('CostCN¥80.00');

    // One report for the table plus one per day for the chart (the API does not bin by time).
    const usage = requests.filter((r) => r.path === '/api/v1/tenants/vision/usage/');
    expect(usage).toHaveLength(4);
    expect(usage.every((r) => new URLSearchParams(r.query).get('group_by') === 'project')).toBe(
      true,
    );
    const chart = await screen.findByTestId('usage-chart');
    expect(chart.dataset.labels).toBe('11-01,11-02,11-03');
    expect(chart.dataset.series).toBe('llm:30|30|30;vision:10|10|10');
    expect(chart.dataset.cost).toBe('80,80,80');

    const link = screen.getByTestId('usage-export');
    const href = new URL(link.getAttribute('href') ?? '', window.location.origin);
    expect(href.pathname).toBe('/api/v1/tenants/vision/usage/');
    expect([href.searchParams.get('export'), href.searchParams.get('group_by')]).toEqual([
      'csv',
      'project',
    ]);
    expect(link.textContent).toContain('Export CSV');
    // A platform view is only offered to platform admins.
    expect(screen.queryByText('All tenants')).toBeNull();
  });

  it('shows platform admins every tenant, grouped by tenant', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/usage/': { status: 200, body: ROWS },
    });
    renderApp('/usage?from=2026-11-01&to=2026-11-01');
    await within(await screen.findByTestId('usage-table')).findByText('vision');
    expect(rowTexts('usage-table')[0]?.[0]).toBe('Tenant');
    expect(screen.getByTestId('usage-scope').textContent).toContain('All tenants');
    // One day: the chart's only bar is the same report as the table's, so one request serves both.
    expect(requests.filter((r) => r.path === '/api/v1/usage/')).toHaveLength(1);
    expect(screen.getByTestId('usage-export').getAttribute('href')).toMatch(
      /^\/api\/v1\/usage\/\?group_by=tenant&/,
    );
  });

  it('shows the empty state', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tenants/vision/usage/': { status: 200, body: [] },
    });
    renderApp('/usage?from=2026-11-01&to=2026-11-02');
    await waitFor(() => {
      expect(screen.getAllByText('No usage in this period.')).toHaveLength(2);
    });
  });

  it('shows a server error with retry', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tenants/vision/usage/': { status: 500, body: { detail: 'boom' } },
    });
    renderApp('/usage?from=2026-11-01&to=2026-11-01');
    await waitFor(() => {
      expect(screen.getAllByText('The server answered with an error (500).')).toHaveLength(2);
    });
  });

  it('shows no totals and the server’s field error when the report fails', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tenants/vision/usage/': {
        status: 400,
        body: { detail: 'Invalid input.', errors: { end: ['A report covers at most 366 days.'] } },
      },
    });
    renderApp('/usage?from=2026-11-01&to=2026-11-01');
    const error = await screen.findByTestId('usage-error');
    expect(error.textContent).toContain('A report covers at most 366 days.');
    // A failed query is no total: "—", not 0 or ¥0.00.
    expect(screen.getByTestId('usage-total-hours').textContent).toBe('GPU-hours—');
    expect(screen.getByTestId('usage-total-cost').textContent).toBe('Cost—');
    expect(screen.getByTestId('usage-export').getAttribute('href')).toBeNull();
  });

  it('refuses a range over 366 days before asking: no export link, the limit said', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tenants/vision/usage/': { status: 200, body: ROWS },
    });
    renderApp('/usage?from=2024-12-12&to=2026-12-01');
    expect((await screen.findByTestId('usage-range-error')).textContent).toBe(
      'A report covers at most 366 days: choose a shorter range.',
    );
    const exported = screen.getByTestId('usage-export');
    expect(exported.getAttribute('href')).toBeNull();
    expect((exported as HTMLButtonElement).disabled).toBe(true);
    // The chart of a range over a year end names the years.
    const chart = await screen.findByTestId('usage-chart');
    expect(chart.dataset.labels?.split(',')[0]).toBe('2024-12-12–2025-01-04');
  });

  it('tells members the report is for administrators', async () => {
    stubFetch({ 'GET /api/v1/auth/session/': sessionOf(BOB) });
    renderApp('/usage');
    expect(await screen.findByTestId('usage-forbidden')).toBeTruthy();
  });
});
