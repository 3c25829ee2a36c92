import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, BOB, page, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

const NODE = {
  id: 4,
  name: 'a800-train-004',
  pool: 'a800-train',
  accelerator_model: 'A800',
  accelerator_count: 8,
  health: 'degraded',
  cordoned: false,
  is_spare: false,
  open_incidents: 1,
  checks: [
    {
      check_name: 'disk',
      status: 'fail',
      faults: ['disk:full'],
      detail: '/var/lib 99% full',
      data: {},
      since: '2026-11-30T00:00:00Z',
      reported_at: '2026-11-30T00:05:00Z',
    },
    {
      check_name: 'gpu',
      status: 'ok',
      faults: [],
      detail: '8 GPUs visible',
      data: {},
      since: '2026-11-29T00:00:00Z',
      reported_at: '2026-11-30T00:05:00Z',
    },
  ],
};
const CHANGE = {
  id: 21,
  check_name: 'disk',
  status: 'fail',
  faults: ['disk:full'],
  detail: '/var/lib 99% full',
  created_at: '2026-11-30T00:00:00Z',
};
const OLDER_CHANGE = {
  ...CHANGE,
  id: 7,
  status: 'ok',
  faults: [],
  detail: 'disk usage 40%',
  created_at: '2026-11-28T00:00:00Z',
};
const INCIDENT = {
  id: 31,
  node: 4,
  node_name: 'a800-train-004',
  check_name: 'disk',
  fault: 'disk:full',
  fault_action: 'cordon',
  severity: 'warning',
  state: 'open',
  detail: 'root disk full',
  jobs: [],
  actions_taken: [],
  remediations: 0,
  lost_gpu_seconds: 0,
  spare: null,
  spare_name: null,
  opened_at: '2026-11-30T00:00:00Z',
  last_seen_at: '2026-11-30T00:05:00Z',
  closed_at: null,
};

function nodeRoutes(node = NODE) {
  return {
    'GET /api/v1/auth/session/': sessionOf(ADMIN),
    'GET /api/v1/health/nodes/4/': { status: 200, body: node },
    'GET /api/v1/health/nodes/4/history/': [
      {
        status: 200,
        body: {
          next: 'http://testserver/api/v1/health/nodes/4/history/?cursor=cD0yMQ%3D%3D&page_size=20',
          previous: null,
          results: [CHANGE],
        },
      },
      page([OLDER_CHANGE]),
    ],
    'GET /api/v1/health/incidents/': page([INCIDENT]),
    'GET /api/v1/telemetry/history/': {
      status: 200,
      body: {
        series: 'node:a800-train-004',
        resolution_s: 10,
        points: [
          {
            ts: '2026-12-03T10:00:00Z',
            gpus: 8,
            util: 71.5,
            fb_used_mib: 0,
            power_w: 0,
            temp_max_c: 0,
            extra: { cpu_pct: 35, mem_used_pct: 60, net_rx_bps: 4e8, ib_tx_bps: 2.5e10 },
          },
        ],
      },
    },
  };
}

describe('node detail page', () => {
  it('shows the node, its checks, its history page by page and its incidents', async () => {
    const { requests } = stubFetch(nodeRoutes());
    renderApp('/health/nodes/4');
    expect(await screen.findByRole('heading', { name: 'a800-train-004' })).toBeTruthy();
    const summary = screen.getByTestId('node-summary');
    expect(within(summary).getByText('a800-train')).toBeTruthy();
    expect(within(summary).getByText('A800 × 8')).toBeTruthy();
    expect(within(summary).getByText('Degraded')).toBeTruthy();
    expect(within(summary).getByText('In service')).toBeTruthy();
    expect(within(summary).getByTestId('open-incidents').textContent).toBe('1');

    const checks = screen.getByTestId('node-checks');
    expect(within(checks).getByText('/var/lib 99% full')).toBeTruthy();
    expect(within(checks).getByText('Failing')).toBeTruthy();
    expect(within(checks).getByText('8 GPUs visible')).toBeTruthy();
    expect(within(checks).getByText('OK')).toBeTruthy();

    // What the node's GPUs, CPU, memory and links did, from the telemetry history.
    const telemetry = screen.getByTestId('node-telemetry');
    const chart = await within(telemetry).findByTestId('history-chart');
    expect(chart.dataset.upper).toBe('GPU utilization:71.5;CPU:35;Memory:60');
    expect(chart.dataset.lower).toBe('Network in:400000000;InfiniBand out:25000000000');
    const series = requests.find((r) => r.path === '/api/v1/telemetry/history/')?.query;
    expect(new URLSearchParams(series).get('series')).toBe('node:a800-train-004');

    const history = screen.getByTestId('node-history');
    expect(await within(history).findByText('/var/lib 99% full')).toBeTruthy();
    const incidents = screen.getByTestId('node-incidents');
    expect(await within(incidents).findByText('root disk full')).toBeTruthy();
    expect(within(incidents).getByText('disk:full')).toBeTruthy();

    // The server filters incidents to this node.
    const incidentQuery = requests.find((r) => r.path === '/api/v1/health/incidents/')?.query;
    expect(new URLSearchParams(incidentQuery).get('node')).toBe('4');

    // "Older" follows the `next` cursor; "Newer" goes back to the first page.
    fireEvent.click(screen.getByTestId('history-older'));
    expect(await within(history).findByText('disk usage 40%')).toBeTruthy();
    expect(within(history).queryByText('/var/lib 99% full')).toBeNull();
    const historyQueries = requests
      .filter((r) => r.path === '/api/v1/health/nodes/4/history/')
      .map((r) => new URLSearchParams(r.query).get('cursor'));
    expect(historyQueries).toEqual([null, 'cD0yMQ==']);
    await waitFor(() => {
      expect(screen.getByTestId<HTMLButtonElement>('history-older').disabled).toBe(true);
    });
    fireEvent.click(screen.getByTestId('history-newer'));
    expect(await within(history).findByText('/var/lib 99% full')).toBeTruthy();
  });

  it("walks the node's older incidents a page at a time", async () => {
    const next = 'http://testserver/api/v1/health/incidents/?cursor=aTI%3D&node=4&page_size=50';
    const { requests } = stubFetch({
      ...nodeRoutes(),
      'GET /api/v1/health/incidents/': [
        { status: 200, body: { next, previous: null, results: [INCIDENT] } },
        page([{ ...INCIDENT, id: 1, detail: 'an older fault', state: 'closed' }]),
      ],
    });
    renderApp('/health/nodes/4');
    const incidents = await screen.findByTestId('node-incidents');
    expect(await within(incidents).findByText('root disk full')).toBeTruthy();
    fireEvent.click(screen.getByTestId('node-incidents-older'));
    expect(await within(incidents).findByText('an older fault')).toBeTruthy();
    const queries = requests
      .filter((r) => r.path === '/api/v1/health/incidents/')
      .map((r) => new URLSearchParams(r.query));
    expect(queries.map((q) => [q.get('node'), q.get('cursor')])).toEqual([
      ['4', null],
      ['4', 'aTI='],
    ]);
  });

  it('cordons the node from its page and goes back to the grid', async () => {
    const { requests } = stubFetch({
      ...nodeRoutes(),
      'GET /api/v1/health/nodes/4/': [
        { status: 200, body: NODE },
        { status: 200, body: { ...NODE, cordoned: true } },
      ],
      'POST /api/v1/health/nodes/4/cordon/': { status: 200, body: { ...NODE, cordoned: true } },
      'GET /api/v1/health/nodes/': page([{ ...NODE, cordoned: true }]),
      'GET /api/v1/health/alerts/': page([]),
    });
    const { router } = renderApp('/health/nodes/4');
    fireEvent.click(await screen.findByTestId('cordon-a800-train-004'));
    const confirm = await screen.findByText(/Stop scheduling new work on a800-train-004/);
    const popup = confirm.closest('.ant-popover');
    if (!(popup instanceof HTMLElement)) throw new Error('no confirmation popup');
    fireEvent.click(within(popup).getByRole('button', { name: 'Cordon' }));
    expect(await screen.findByText('a800-train-004 cordoned')).toBeTruthy();
    // The page refetches the node and now offers the opposite action.
    expect(await screen.findByTestId('uncordon-a800-train-004')).toBeTruthy();
    expect(within(screen.getByTestId('node-summary')).getByText('Cordoned')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      '/api/v1/health/nodes/4/cordon/',
    ]);

    fireEvent.click(screen.getByRole('button', { name: /Back/ }));
    expect(router.state.location.pathname).toBe('/health');
    expect(await screen.findByTestId('node-grid')).toBeTruthy();
  });

  it('opens a node from the grid by its name', async () => {
    stubFetch({
      ...nodeRoutes(),
      'GET /api/v1/health/nodes/': page([
        { ...NODE, id: 3, name: 'a800-train-003', checks: [] },
        { ...NODE, checks: [] },
      ]),
      'GET /api/v1/health/alerts/': page([]),
    });
    const { router } = renderApp('/health');
    const link = await screen.findByRole('link', { name: 'a800-train-004' });
    expect(link.getAttribute('href')).toBe('/health/nodes/4');
    fireEvent.click(link);
    expect(router.state.location.pathname).toBe('/health/nodes/4');
    expect(await screen.findByTestId('node-checks')).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'a800-train-004' })).toBeTruthy();
  });

  it('shows a load error for a node that does not exist', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/health/nodes/99/': { status: 404, body: { detail: 'Not found.' } },
    });
    renderApp('/health/nodes/99');
    expect(await screen.findByRole('alert')).toBeTruthy();
    expect(screen.getByRole('button', { name: /Back/ })).toBeTruthy();
  });

  it('is for platform admins only', async () => {
    stubFetch({ 'GET /api/v1/auth/session/': sessionOf(BOB) });
    renderApp('/health/nodes/4');
    expect(await screen.findByText('Platform admins only')).toBeTruthy();
  });
});
