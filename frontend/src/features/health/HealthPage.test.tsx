import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
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
  delivery_attempts: 0,
  delivery_status: [],
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

const SUMMARY = {
  status: 200,
  body: { total: 2, healthy: 1, degraded: 0, faulty: 1, cordoned: 1, spare: 0 },
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
      'GET /api/v1/health/nodes/summary/': SUMMARY,
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
      'GET /api/v1/health/nodes/summary/': SUMMARY,
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
      'GET /api/v1/health/nodes/summary/': SUMMARY,
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
      'GET /api/v1/health/nodes/summary/': SUMMARY,
      'GET /api/v1/health/incidents/': page([]),
      'GET /api/v1/health/alerts/': page([]),
    });
    renderApp('/health');
    expect(await screen.findByText('No alerts. All quiet.')).toBeTruthy();
    expect(await screen.findByText('No nodes registered.')).toBeTruthy();
  });

  it('counts the whole fleet, filters the grid by health and name, a page at a time', async () => {
    const user = userEvent.setup();
    const next = 'http://localhost:3000/api/v1/health/nodes/?cursor=n2&page_size=200';
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/summary/': {
        status: 200,
        body: { total: 1250, healthy: 1225, degraded: 12, faulty: 13, cordoned: 3, spare: 1 },
      },
      'GET /api/v1/health/nodes/': [
        { status: 200, body: { next, previous: null, results: [NODE] } },
        page([{ ...NODE, id: 900, name: 'gpu-0900' }]),
        page([NODE]),
        page([]),
      ],
      'GET /api/v1/health/incidents/': page([]),
      'GET /api/v1/health/alerts/': page([]),
    });
    renderApp('/health');
    await screen.findByTestId('node-link-a800-train-003');
    const filter = screen.getByRole('radiogroup', { name: 'Show nodes by health' });
    await waitFor(() => {
      expect(within(filter).getByText('Faulty 13')).toBeTruthy();
    });
    expect(within(filter).getByText('All 1250')).toBeTruthy();
    expect(within(filter).getByText('Healthy 1225')).toBeTruthy();
    expect(within(filter).getByText('Degraded 12')).toBeTruthy();

    await user.click(screen.getByTestId('grid-page-older'));
    await screen.findByTestId('node-link-gpu-0900');
    expect(screen.getByTestId('grid-page-page').textContent).toBe('Page 2');
    expect(screen.getByTestId('grid-page-newer').textContent).toBe('Previous');

    await user.click(within(filter).getByText('Faulty 13'));
    await screen.findByTestId('node-link-a800-train-003');
    await user.type(screen.getByRole('searchbox', { name: 'Search by name' }), 'zzz{Enter}');
    expect(await screen.findByText('No node matches.')).toBeTruthy();
    expect(requests.filter((r) => r.path === '/api/v1/health/nodes/').map((r) => r.query)).toEqual([
      'page_size=200',
      'page_size=200&cursor=n2',
      'page_size=200&health=faulty',
      'page_size=200&health=faulty&name=zzz',
    ]);
  });

  it('asks the server for open alerts and for each tab of incidents by state', async () => {
    const user = userEvent.setup();
    const INCIDENT = {
      id: 7,
      actions_taken: [],
      check_name: 'gpu',
      closed_at: '2026-11-29T04:00:00Z',
      detail: 'GPU fell off the bus',
      fault: 'xid:79',
      fault_action: 'cordon_drain',
      jobs: [],
      last_seen_at: '2026-11-29T00:00:00Z',
      lost_gpu_seconds: 0,
      node: 3,
      node_name: 'a800-train-003',
      opened_at: '2026-11-29T00:00:00Z',
      remediations: 0,
      severity: 'critical',
      spare: null,
      spare_name: null,
      state: 'closed',
    };
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/summary/': SUMMARY,
      'GET /api/v1/health/nodes/': page([NODE]),
      'GET /api/v1/health/incidents/': [page([]), page([INCIDENT])],
      'GET /api/v1/health/alerts/': [
        page([ALERT]),
        page([{ ...ALERT, id: 8, state: 'resolved', message: 'ECC storm' }]),
      ],
    });
    renderApp('/health');
    const inbox = await screen.findByTestId('alert-inbox');
    await within(inbox).findByText('GPU fell off the bus');
    await user.click(within(inbox).getByText('Resolved'));
    await within(inbox).findByText('ECC storm');
    await user.click(screen.getByRole('tab', { name: 'Closed' }));
    expect(
      await within(screen.getByTestId('incidents-closed')).findByText('a800-train-003'),
    ).toBeTruthy();
    const queries = (path: string) => requests.filter((r) => r.path === path).map((r) => r.query);
    expect(queries('/api/v1/health/alerts/')).toEqual([
      'state=open&page_size=50',
      'state=resolved&page_size=50',
    ]);
    expect(queries('/api/v1/health/incidents/')).toEqual([
      'state=open&page_size=50',
      'state=closed&page_size=50',
    ]);
  });

  it('is for platform admins only', async () => {
    stubFetch({ 'GET /api/v1/auth/session/': sessionOf(BOB) });
    renderApp('/health');
    expect(await screen.findByText('Platform admins only')).toBeTruthy();
  });
});
