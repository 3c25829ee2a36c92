import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { ALICE, renderApp } from '../../test/renderApp';

const SESSION = { status: 200, body: ALICE, setCookie: 'csrftoken=tok123; path=/' };

const OVERVIEW = {
  tenants: 4,
  clusters: 2,
  pools: 5,
  nodes: 160,
  gpus: 1280,
  spare_gpus: 16,
  gpus_by_model: [
    { model: 'A800-SXM4-80GB', vendor: 'nvidia', count: 1024 },
    { model: 'Ascend910B', vendor: 'huawei', count: 256 },
  ],
  jobs_running: 37,
  jobs_pending: 12,
};

function stat(testId: string): { text: string | null; value: string | null } {
  const element = screen.getByTestId(testId);
  return { text: element.textContent, value: element.getAttribute('data-value') };
}

describe('overview', () => {
  it('shows the numbers from /api/v1/overview/', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': SESSION,
      'GET /api/v1/overview/': { status: 200, body: OVERVIEW },
    });
    renderApp('/');

    await screen.findByTestId('stat-gpus');
    expect(stat('stat-tenants')).toEqual({ text: '4', value: '4' });
    expect(stat('stat-clusters')).toEqual({ text: '2', value: '2' });
    expect(stat('stat-nodes')).toEqual({ text: '160', value: '160' });
    expect(stat('stat-gpus')).toEqual({ text: '1,280', value: '1280' });
    expect(stat('stat-jobs-running')).toEqual({ text: '37', value: '37' });
    expect(stat('stat-jobs-pending')).toEqual({ text: '12', value: '12' });
    expect(screen.getByText('Resource pools: 5')).toBeTruthy();
    expect(screen.getByText('Plus 16 on hot spares')).toBeTruthy();

    const rows = within(screen.getByTestId('gpu-model-table')).getAllByRole('row');
    expect(rows.map((row) => Array.from(row.children, (cell) => cell.textContent))).toEqual([
      ['Model', 'Vendor', 'Count', 'Share'],
      ['A800-SXM4-80GB', 'NVIDIA', '1,024', '80%'],
      ['Ascend910B', 'Huawei Ascend', '256', '20%'],
    ]);
  });

  it('shows the empty state when no cluster is registered', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': SESSION,
      'GET /api/v1/overview/': {
        status: 200,
        body: {
          ...OVERVIEW,
          clusters: 0,
          pools: 0,
          nodes: 0,
          gpus: 0,
          spare_gpus: 0,
          gpus_by_model: [],
        },
      },
    });
    renderApp('/overview');

    const empty = await screen.findByTestId('overview-empty');
    expect(within(empty).getByText('No clusters yet')).toBeTruthy();
    expect(stat('stat-gpus')).toEqual({ text: '0', value: '0' });
  });

  it('shows the error state with a retry button when the request fails', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': SESSION,
      'GET /api/v1/overview/': { status: 500, body: { detail: 'Internal server error.' } },
    });
    renderApp('/overview');

    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Could not load data')).toBeTruthy();
    expect(within(alert).getByText('The server answered with an error (500).')).toBeTruthy();
    expect(within(alert).getByRole('button', { name: 'Retry' })).toBeTruthy();
    expect(screen.queryByTestId('stat-gpus')).toBeNull();
  });
});
