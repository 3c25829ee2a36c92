import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import type { RecordedRequest } from '../../test/fetchStub';
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

/** One GPU's history as the API answers it: `points` of (util, fb_used_pct, sm, W, °C). */
function gpuHistory(
  source: 'prometheus' | 'recent',
  points: [number, number, number, number, number][],
  gpu = 0,
) {
  return {
    status: 200,
    body: {
      node: 'a800-train-004',
      gpu,
      source,
      resolution_s: source === 'recent' ? 10 : 30,
      kept_s: source === 'recent' ? 3600 : null,
      points: points.map(([util, fb, sm, power, temp], i) => ({
        ts: `2026-12-03T10:00:${String(i * 10).padStart(2, '0')}Z`,
        util,
        fb_used_pct: fb,
        sm_active_pct: sm,
        power_w: power,
        temp_c: temp,
      })),
    },
  };
}

/** The query of the last GPU history request. */
function lastGpuQuery(requests: RecordedRequest[]): URLSearchParams {
  return new URLSearchParams(
    requests.filter((r) => r.path === '/api/v1/telemetry/gpu-history/').at(-1)?.query,
  );
}

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
    'GET /api/v1/telemetry/gpu-history/': gpuHistory('recent', []),
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

describe("a node's GPU history", () => {
  it('draws the points Prometheus answers, over the window picked', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      ...nodeRoutes(),
      'GET /api/v1/telemetry/gpu-history/': gpuHistory('prometheus', [
        [71.5, 40, 60, 250, 55],
        [80, 41.2, 65.5, 300.5, 58],
      ]),
    });
    renderApp('/health/nodes/4');
    const card = await screen.findByTestId('node-gpu-history');
    const chart = await within(card).findByRole('img', {
      name: 'GPU 0 of a800-train-004 over the last 1 hour',
    });
    expect(chart.dataset.lines).toBe(
      'Utilization (percent):71.5|80;Memory used (percent):40|41.2;SM activity (percent):60|65.5;' +
        'Power (watts):250|300.5;Temperature (celsius):55|58',
    );
    expect(chart.dataset.spanS).toBe('3600');
    expect(within(card).getByTestId('node-gpu-history-source').textContent).toBe(
      'From Prometheus, a point every 30 s',
    );
    // Prometheus keeps as far back as asked: no word about the embedded collector.
    expect(within(card).queryByTestId('node-gpu-history-kept')).toBeNull();
    const query = lastGpuQuery(requests);
    expect(query.get('node')).toBe('a800-train-004');
    expect(query.get('gpu')).toBe('0');
    expect(Math.abs(Date.now() - 3600_000 - Date.parse(query.get('start') ?? ''))).toBeLessThan(
      60_000,
    );
    expect(query.get('end')).toBeNull();

    // A day, from Prometheus: the whole day on the axis, and still no note.
    await user.click(within(card).getByText('24 hours'));
    expect(
      await within(card).findByRole('img', {
        name: 'GPU 0 of a800-train-004 over the last 24 hours',
      }),
    ).toBeTruthy();
    expect(within(card).getByTestId('gpu-history-chart').dataset.spanS).toBe('86400');
    expect(
      Math.abs(Date.now() - 86_400_000 - Date.parse(lastGpuQuery(requests).get('start') ?? '')),
    ).toBeLessThan(60_000);
    expect(within(card).queryByTestId('node-gpu-history-kept')).toBeNull();
  });

  it('asks again every 10 seconds while the page is open', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      const { requests } = stubFetch({
        ...nodeRoutes(),
        'GET /api/v1/telemetry/gpu-history/': [
          gpuHistory('recent', [[10, 10, 10, 100, 40]]),
          gpuHistory('recent', [
            [10, 10, 10, 100, 40],
            [20, 10, 10, 100, 40],
          ]),
        ],
      });
      renderApp('/health/nodes/4');
      const card = await screen.findByTestId('node-gpu-history');
      const chart = await within(card).findByTestId('gpu-history-chart');
      expect(chart.dataset.lines).toMatch(/^Utilization \(percent\):10;/);
      await act(async () => {
        await vi.advanceTimersByTimeAsync(10_000);
      });
      await waitFor(() => {
        expect(within(card).getByTestId('gpu-history-chart').dataset.lines).toMatch(
          /^Utilization \(percent\):10\|20;/,
        );
      });
      expect(requests.filter((r) => r.path === '/api/v1/telemetry/gpu-history/')).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("draws the embedded collector's points, and says it keeps only the last hour", async () => {
    const user = userEvent.setup();
    stubFetch({
      ...nodeRoutes(),
      'GET /api/v1/telemetry/gpu-history/': gpuHistory('recent', [[12, 5, 8, 90, 41]]),
    });
    renderApp('/health/nodes/4');
    const card = await screen.findByTestId('node-gpu-history');
    const chart = await within(card).findByTestId('gpu-history-chart');
    expect(chart.dataset.lines).toBe(
      'Utilization (percent):12;Memory used (percent):5;SM activity (percent):8;' +
        'Power (watts):90;Temperature (celsius):41',
    );
    expect(within(card).getByTestId('node-gpu-history-source').textContent).toBe(
      'From the embedded collector, a point every 10 s',
    );
    // The hour it keeps is the hour asked for: nothing to say.
    expect(within(card).queryByTestId('node-gpu-history-kept')).toBeNull();

    await user.click(within(card).getByText('6 hours'));
    expect(await within(card).findByTestId('node-gpu-history-kept')).toBeTruthy();
    expect(within(card).getByTestId('node-gpu-history-kept').textContent).toBe(
      'The embedded collector keeps the last hour; a cluster with Prometheus keeps more.',
    );
    // The axis spans what the source keeps, not six hours with one at its right edge.
    expect(within(card).getByTestId('gpu-history-chart').dataset.spanS).toBe('3600');
  });

  it('asks for the GPU picked and puts it in the address', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      ...nodeRoutes(),
      'GET /api/v1/telemetry/gpu-history/': [
        gpuHistory('recent', [[10, 10, 10, 100, 40]]),
        gpuHistory('recent', [[95, 90, 88, 400, 70]], 5),
      ],
    });
    const { router } = renderApp('/health/nodes/4');
    const card = await screen.findByTestId('node-gpu-history');
    expect(await within(card).findByTestId('gpu-history-chart')).toBeTruthy();
    const picker = within(card).getByRole('radiogroup', { name: 'GPU' });
    expect(
      within(picker)
        .getAllByRole('radio')
        .map((r) => r.closest('label')?.textContent),
    ).toEqual(['GPU 0', 'GPU 1', 'GPU 2', 'GPU 3', 'GPU 4', 'GPU 5', 'GPU 6', 'GPU 7']);
    await user.click(within(picker).getByText('GPU 5'));
    expect(
      await within(card).findByRole('img', {
        name: 'GPU 5 of a800-train-004 over the last 1 hour',
      }),
    ).toBeTruthy();
    expect(within(card).getByTestId('gpu-history-chart').dataset.lines).toMatch(
      /^Utilization \(percent\):95;/,
    );
    expect(lastGpuQuery(requests).get('gpu')).toBe('5');
    expect(router.state.location.pathname).toBe('/health/nodes/4');
    expect(router.state.location.search).toBe('?gpu=5');
  });

  it('opens on the GPU the address names', async () => {
    const { requests } = stubFetch({
      ...nodeRoutes(),
      'GET /api/v1/telemetry/gpu-history/': gpuHistory('recent', [[33, 20, 30, 150, 50]], 3),
    });
    renderApp('/health/nodes/4?gpu=3');
    const card = await screen.findByTestId('node-gpu-history');
    expect(
      await within(card).findByRole('img', {
        name: 'GPU 3 of a800-train-004 over the last 1 hour',
      }),
    ).toBeTruthy();
    const picker = within(card).getByRole('radiogroup', { name: 'GPU' });
    const checked = within(picker)
      .getAllByRole<HTMLInputElement>('radio')
      .filter((r) => r.checked)
      .map((r) => r.closest('label')?.textContent);
    expect(checked).toEqual(['GPU 3']);
    const asked = requests
      .filter((r) => r.path === '/api/v1/telemetry/gpu-history/')
      .map((r) => new URLSearchParams(r.query).get('gpu'));
    expect(asked).toEqual(['3']);
  });

  it('offers a list rather than buttons for a node with many GPUs', async () => {
    const { requests } = stubFetch(nodeRoutes({ ...NODE, accelerator_count: 16 }));
    renderApp('/health/nodes/4?gpu=12');
    const card = await screen.findByTestId('node-gpu-history');
    expect(await within(card).findByTestId('node-gpu-history-empty')).toBeTruthy();
    expect(lastGpuQuery(requests).get('gpu')).toBe('12');
    expect(within(card).getByRole('combobox', { name: 'GPU' })).toBeTruthy();
    expect(within(card).getByTitle('GPU 12')).toBeTruthy();
  });

  it('shows GPU 0 for an index the node does not have', async () => {
    const { requests } = stubFetch(nodeRoutes());
    renderApp('/health/nodes/4?gpu=8');
    const card = await screen.findByTestId('node-gpu-history');
    expect(await within(card).findByTestId('node-gpu-history-empty')).toBeTruthy();
    expect(lastGpuQuery(requests).get('gpu')).toBe('0');
  });

  it('says when there are no samples of the GPU yet', async () => {
    stubFetch(nodeRoutes());
    renderApp('/health/nodes/4');
    const card = await screen.findByTestId('node-gpu-history');
    const empty = await within(card).findByTestId('node-gpu-history-empty');
    expect(empty.textContent).toContain('No samples of this GPU yet');
  });

  it("shows the server's reason when per-GPU history is not available", async () => {
    const detail =
      'Per-GPU history needs Prometheus (ZS_TELEMETRY_SOURCE=prometheus) or the embedded default, whose collector keeps the last hour in the web process.';
    const { requests } = stubFetch({
      ...nodeRoutes(),
      'GET /api/v1/telemetry/gpu-history/': [
        { status: 503, body: { detail } },
        gpuHistory('recent', [[50, 50, 50, 200, 60]]),
      ],
    });
    renderApp('/health/nodes/4');
    const card = await screen.findByTestId('node-gpu-history');
    const notice = await within(card).findByTestId('node-gpu-history-unavailable');
    expect(notice.textContent).toContain('Per-GPU history is not available here');
    expect(notice.textContent).toContain(detail);
    // The rest of the page is unaffected.
    expect(
      await within(screen.getByTestId('node-telemetry')).findByTestId('history-chart'),
    ).toBeTruthy();
    // Not retried on its own; the retry button asks again.
    const asked = () => requests.filter((r) => r.path === '/api/v1/telemetry/gpu-history/').length;
    expect(asked()).toBe(1);
    fireEvent.click(within(notice).getByRole('button', { name: 'Retry' }));
    expect(await within(card).findByTestId('gpu-history-chart')).toBeTruthy();
    expect(asked()).toBe(2);
  });

  it('has no GPU history for a node without GPUs', async () => {
    const { requests } = stubFetch(nodeRoutes({ ...NODE, accelerator_count: 0 }));
    renderApp('/health/nodes/4');
    expect(await screen.findByTestId('node-telemetry')).toBeTruthy();
    expect(screen.queryByTestId('node-gpu-history')).toBeNull();
    expect(requests.some((r) => r.path === '/api/v1/telemetry/gpu-history/')).toBe(false);
  });
});
