import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, POOLS, sessionOf } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';

const QUOTA = {
  id: 1,
  tenant: 'vision',
  pool: 1,
  pool_name: 'a800-train',
  accelerator_model: 'A800',
  guarantee: 48,
  borrow_limit: 32,
  weight: 1,
  used: 16,
  updated_at: '2026-11-30T00:00:00Z',
};
const QUEUE = [
  {
    position: 1,
    job: 5,
    name: 'big-run',
    tenant: 'vision',
    priority: 4,
    devices: 64,
    waiting_s: 125,
    pending_code: 'insufficient',
    pending_message: 'Waiting for 64 A800',
    held_nodes: 2,
    expected_start_at: new Date(Date.now() + 3 * 3_600_000 + 60_000).toISOString(),
  },
  {
    position: 2,
    job: null,
    name: null,
    tenant: null,
    priority: 5,
    devices: 8,
    waiting_s: 30,
    pending_code: 'behind',
    pending_message: null,
    held_nodes: 0,
    expected_start_at: null,
  },
];

function rows(testId: string): string[][] {
  return within(screen.getByTestId(testId))
    .getAllByRole('row')
    .map((row) => Array.from(row.children, (cell) => cell.textContent));
}

describe('quotas and pools', () => {
  it('shows a tenant admin their quota, use and the pool queue', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tenants/vision/quotas/': { status: 200, body: [QUOTA] },
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/pools/1/queue/': { status: 200, body: QUEUE },
    });
    renderApp('/quotas');
    await screen.findByText('Quotas of Vision Lab');
    await screen.findByTestId('quota-used');
    expect(rows('tenant-quotas')[1]?.slice(0, 5)).toEqual(['a800-train', 'A800', '48', '32', '16']);
    await screen.findByText('big-run (vision)');
    expect(rows('pool-queue').slice(1)).toEqual([
      ['1', 'big-run (vision)', 'P4', '64', '2 min 5 s', '~3 h', 'Waiting for 64 A800', '2'],
      ['2', 'Another tenant', 'P5', '8', '30 s', '—', 'behind', '0'],
    ]);
    expect(screen.queryByTestId('quota-console')).toBeNull();
    // Each pool links to its servers on the Cluster page.
    const links = within(screen.getByTestId('pools')).getAllByRole('link', {
      name: 'View servers',
    });
    expect(links.map((a) => a.getAttribute('href'))).toEqual([
      '/cluster?pool=1',
      '/cluster?pool=2',
    ]);
  });

  it('lets a platform admin edit a quota and shows the server validation error inline', async () => {
    const message =
      'Guarantees in a800-train for A800 would total 1080, but the pool has 128 (48 left to guarantee).';
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/quotas/': { status: 200, body: [QUOTA] },
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/pools/1/queue/': { status: 200, body: [] },
      'PATCH /api/v1/quotas/1/': {
        status: 400,
        body: { detail: 'Invalid input.', errors: { guarantee: [message] } },
      },
    });
    renderApp('/quotas');
    const input = await screen.findByLabelText('Guarantee for vision in a800-train');
    fireEvent.change(input, { target: { value: '1000' } });
    fireEvent.click(screen.getByTestId('quota-1-save'));
    const error = await screen.findByTestId('quota-1-guarantee-error');
    expect(error.textContent).toBe(message);
    expect(requests.filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual([
      { guarantee: 1000 },
    ]);
    expect(screen.getByText('Nothing waiting.')).toBeTruthy();
    await waitFor(() => {
      expect(screen.getByRole('link', { name: /Audit trail/ }).getAttribute('href')).toBe(
        '/api/v1/audit/?object_type=quota',
      );
    });
  });

  it('shows the error state when quotas cannot be loaded', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tenants/vision/quotas/': { status: 500, body: { detail: 'x' } },
      'GET /api/v1/pools/': { status: 200, body: [] },
    });
    renderApp('/quotas');
    const card = await screen.findByTestId('tenant-quotas');
    expect(await within(card).findByText('The server answered with an error (500).')).toBeTruthy();
    expect(await screen.findByText('No pools.')).toBeTruthy();
  });
});
