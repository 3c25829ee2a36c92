import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, BOB, page, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

const ALERT = {
  id: 9,
  node: 3,
  node_name: 'a800-train-003',
  incident: null,
  fault: 'xid_79',
  severity: 'critical',
  message: 'GPU fell off the bus',
  occurrences: 2,
  state: 'open',
  deliveries: {},
  created_at: '2026-11-30T00:00:00Z',
  acknowledged_at: null,
  acknowledged_by: null,
  resolved_at: null,
};
const NODE = {
  id: 3,
  name: 'a800-train-003',
  pool: 'a800-train',
  accelerator_model: 'A800',
  accelerator_count: 8,
  health: 'faulty',
  cordoned: true,
  is_spare: false,
  open_incidents: 1,
  checks: [],
};

describe('health', () => {
  it('shows nodes and alerts and acknowledges an alert', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/': page([
        NODE,
        {
          ...NODE,
          id: 4,
          name: 'a800-train-004',
          health: 'healthy',
          cordoned: false,
          open_incidents: 0,
        },
      ]),
      'GET /api/v1/health/incidents/': page([]),
      'GET /api/v1/health/alerts/': [
        page([ALERT]),
        page([{ ...ALERT, acknowledged_at: '2026-11-30T00:01:00Z', acknowledged_by: 1 }]),
      ],
      'POST /api/v1/health/alerts/9/acknowledge/': {
        status: 200,
        body: { ...ALERT, acknowledged_at: '2026-11-30T00:01:00Z' },
      },
    });
    renderApp('/health');
    const cells = await screen.findAllByTestId('node-cell');
    expect(cells.map((c) => c.getAttribute('aria-label'))).toEqual([
      'a800-train-003: Faulty',
      'a800-train-004: Healthy',
    ]);
    const inbox = screen.getByTestId('alert-inbox');
    await within(inbox).findByText('GPU fell off the bus');
    fireEvent.click(within(inbox).getByTestId('ack-9'));
    await waitFor(() => {
      expect(within(inbox).queryByTestId('ack-9')).toBeNull();
    });
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      '/api/v1/health/alerts/9/acknowledge/',
    ]);
    expect(screen.getByText('No incidents.')).toBeTruthy();
  });

  it('cordons a node after confirming and uncordons a cordoned one', async () => {
    const HEALTHY = { ...NODE, id: 4, name: 'a800-train-004', health: 'healthy', cordoned: false };
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/': [
        page([NODE, HEALTHY]),
        page([NODE, { ...HEALTHY, cordoned: true }]),
      ],
      'GET /api/v1/health/incidents/': page([]),
      'GET /api/v1/health/alerts/': page([]),
      'POST /api/v1/health/nodes/4/cordon/': { status: 200, body: { ...HEALTHY, cordoned: true } },
      'POST /api/v1/health/nodes/3/uncordon/': { status: 200, body: { ...NODE, cordoned: false } },
    });
    renderApp('/health');
    fireEvent.click(await screen.findByTestId('cordon-a800-train-004'));
    // Nothing is sent until the operator confirms.
    expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
    const confirm = await screen.findByText(/Stop scheduling new work on a800-train-004/);
    const popup = confirm.closest('.ant-popover');
    if (!(popup instanceof HTMLElement)) throw new Error('no confirmation popup');
    fireEvent.click(within(popup).getByRole('button', { name: 'Cordon' }));
    expect(await screen.findByText('a800-train-004 cordoned')).toBeTruthy();
    expect(await screen.findByTestId('uncordon-a800-train-004')).toBeTruthy();
    fireEvent.click(screen.getByTestId('uncordon-a800-train-003'));
    expect(await screen.findByText('a800-train-003 back in service')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      '/api/v1/health/nodes/4/cordon/',
      '/api/v1/health/nodes/3/uncordon/',
    ]);
  });

  it('moves an idle node into the spares and shows the server refusing a busy one', async () => {
    const IDLE = { ...NODE, id: 4, name: 'a800-train-004', health: 'healthy', cordoned: false };
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/': [page([NODE, IDLE]), page([NODE, { ...IDLE, is_spare: true }])],
      'GET /api/v1/health/incidents/': page([]),
      'GET /api/v1/health/alerts/': page([]),
      'POST /api/v1/health/nodes/4/spare/': { status: 200, body: { ...IDLE, is_spare: true } },
      'POST /api/v1/health/nodes/3/spare/': {
        status: 409,
        body: {
          detail: 'a800-train-003 runs jobs: drain it (or let them end) before making it a spare',
        },
      },
    });
    renderApp('/health');
    fireEvent.click(await screen.findByTestId('spare-a800-train-004'));
    expect(await screen.findByText('a800-train-004 is a hot spare')).toBeTruthy();
    await waitFor(() => {
      expect(screen.getByTestId('spare-a800-train-004').textContent).toContain('Back to pool');
    });
    fireEvent.click(screen.getByTestId('spare-a800-train-003'));
    expect(await screen.findByText(/runs jobs: drain it/)).toBeTruthy();
    const posts = requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => [r.path, r.body])).toEqual([
      ['/api/v1/health/nodes/4/spare/', { spare: true }],
      ['/api/v1/health/nodes/3/spare/', { spare: true }],
    ]);
  });

  it('shows the empty inbox', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/': page([]),
      'GET /api/v1/health/incidents/': page([]),
      'GET /api/v1/health/alerts/': page([]),
    });
    renderApp('/health');
    expect(await screen.findByText('No alerts. All quiet.')).toBeTruthy();
    expect(await screen.findByText('No nodes registered.')).toBeTruthy();
  });

  it('is for platform admins only', async () => {
    stubFetch({ 'GET /api/v1/auth/session/': sessionOf(BOB) });
    renderApp('/health');
    expect(await screen.findByText('Platform admins only')).toBeTruthy();
  });
});
