import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { FakeWebSocket } from '../../test/fakeWebSocket';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, BOB, page, POOLS, sessionOf, TOPOLOGY, topologyCounts } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

const FRAME = {
  type: 'telemetry.frame',
  topic: 'heatmap',
  epoch: 'e1',
  seq: 3,
  base: 0,
  at: 1,
  data: {
    fields: ['util', 'fb_used_mib', 'temp_c', 'power_w', 'sm_pct'],
    cells: {
      'node-b:1': [90, 100, 70, 300, 80],
      'node-a:0': [10, 50, 40, 100, 5],
      'node-b:0': [55, 60, 60, 200, 50],
    },
    removed: [],
    summary: { cluster: { gpus: 3, busy: 2, util: 51.7 } },
  },
};

const NO_HISTORY = { status: 200, body: { series: 'cluster', resolution_s: 10, points: [] } };
const historyOf = (series: string, points: { util: number; gpus: number; busy: number }[]) => ({
  status: 200,
  body: {
    series,
    resolution_s: 10,
    points: points.map((p, i) => ({
      ts: `2026-12-03T10:00:${String(i * 10).padStart(2, '0')}Z`,
      gpus: p.gpus,
      util: p.util,
      fb_used_mib: 0,
      power_w: 0,
      temp_max_c: 0,
      extra: { busy: p.busy },
    })),
  },
});

const TOPOLOGY_ROUTES = {
  'GET /api/v1/pools/': { status: 200, body: POOLS },
  'GET /api/v1/pools/1/topology/': { status: 200, body: TOPOLOGY },
};

function telemetrySocket(): FakeWebSocket {
  const socket = FakeWebSocket.instances.find((s) => s.url.endsWith('/ws/v1/telemetry/'));
  if (socket === undefined) throw new Error('the cluster page opened no telemetry socket');
  return socket;
}

// A platform admin's cluster page: session, topology, telemetry snapshot, no history yet.
const ADMIN_ROUTES = {
  'GET /api/v1/auth/session/': sessionOf(ADMIN),
  ...TOPOLOGY_ROUTES,
  'GET /api/v1/telemetry/snapshot/': { status: 200, body: FRAME },
  'GET /api/v1/telemetry/history/': NO_HISTORY,
};

describe('cluster', () => {
  it('shows the summary and the heatmap of every GPU for a platform admin', async () => {
    const { requests } = stubFetch(ADMIN_ROUTES);
    renderApp('/cluster');
    expect((await screen.findByTestId('heatmap-caption')).textContent).toBe('2 nodes, 3 GPUs');
    expect(
      await screen.findByRole('img', { name: 'Heatmap of Utilization % per GPU' }),
    ).toBeTruthy();
    // No stored history yet: said so, and no scope switch (a platform admin has no tenant).
    expect(await screen.findByTestId('cluster-history-empty')).toBeTruthy();
    expect(screen.queryByRole('radiogroup', { name: 'Series' })).toBeNull();
    expect(requests.find((r) => r.path === '/api/v1/telemetry/snapshot/')?.query).toBe(
      'topic=heatmap',
    );
  });

  it('streams deltas from the telemetry socket and reloads the snapshot on a gap', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      ...TOPOLOGY_ROUTES,
      'GET /api/v1/telemetry/snapshot/': [
        { status: 200, body: FRAME },
        {
          status: 200,
          body: {
            ...FRAME,
            seq: 9,
            data: { ...FRAME.data, summary: { cluster: { gpus: 3, busy: 3, util: 80 } } },
          },
        },
      ],
      'GET /api/v1/telemetry/history/': NO_HISTORY,
    });
    renderApp('/cluster');
    expect((await screen.findByTestId('heatmap-caption')).textContent).toBe('2 nodes, 3 GPUs');
    const socket = telemetrySocket();
    act(() => {
      socket.open();
    });
    expect(socket.sent).toContainEqual({ action: 'subscribe', topic: 'heatmap' });
    expect(screen.getByTestId('heatmap-connection').dataset.state).toBe('open');
    act(() => {
      socket.receive({
        ...FRAME,
        seq: 4,
        base: 3,
        data: {
          ...FRAME.data,
          cells: { 'node-c:0': [99, 1, 1, 1, 1] },
          summary: { cluster: { gpus: 4, busy: 3, util: 60 } },
        },
      });
    });
    expect(screen.getByTestId('heatmap-caption').textContent).toBe('3 nodes, 4 GPUs');
    expect(screen.getByTestId('cluster-gpus').textContent).toContain('4');
    const before = requests.filter((r) => r.path === '/api/v1/telemetry/snapshot/').length;
    act(() => {
      socket.receive({ ...FRAME, seq: 8, base: 7 });
    });
    // The gap reloads the snapshot (seq 9), which replaces the view: node-c is gone again.
    expect(await screen.findByText('2 nodes, 3 GPUs')).toBeTruthy();
    expect(requests.filter((r) => r.path === '/api/v1/telemetry/snapshot/').length).toBe(
      before + 1,
    );
  });

  it('shows the empty state when no GPU is in view', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      ...TOPOLOGY_ROUTES,
      'GET /api/v1/telemetry/snapshot/': {
        status: 200,
        body: { ...FRAME, data: { ...FRAME.data, cells: {}, summary: {} } },
      },
      'GET /api/v1/telemetry/history/': NO_HISTORY,
    });
    renderApp('/cluster');
    expect(await screen.findByTestId('cluster-empty')).toBeTruthy();
  });

  it("draws the stored history, of the cluster or of the member's tenant, over a chosen range", async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      ...TOPOLOGY_ROUTES,
      'GET /api/v1/telemetry/snapshot/': {
        status: 200,
        body: { ...FRAME, topic: 'heatmap:vision' },
      },
      'GET /api/v1/telemetry/history/': [
        historyOf('cluster', [
          { util: 40, gpus: 16, busy: 10 },
          { util: 55.5, gpus: 16, busy: 12 },
        ]),
        historyOf('tenant:vision', [{ util: 90, gpus: 4, busy: 4 }]),
        historyOf('tenant:vision', [{ util: 88, gpus: 6, busy: 6 }]),
      ],
    });
    renderApp('/cluster');
    const card = await screen.findByTestId('cluster-history');
    const chart = await within(card).findByRole('img', { name: 'History over the last 1 hour' });
    expect(chart.dataset.upper).toBe('GPU utilization:40|55.5');
    expect(chart.dataset.lower).toBe('Allocated GPUs:10|12;All GPUs:16|16');
    const query = () =>
      new URLSearchParams(
        requests.filter((r) => r.path === '/api/v1/telemetry/history/').at(-1)?.query,
      );
    expect(query().get('series')).toBe('cluster');
    expect(query().get('resolution')).toBe('10');
    // The start is an hour back (give or take the test's own run time).
    const start = Date.parse(query().get('start') ?? '');
    expect(Math.abs(Date.now() - 3600_000 - start)).toBeLessThan(60_000);

    // The member's own tenant: the GPUs it holds.
    await user.click(within(card).getByText('Tenant Vision Lab'));
    await waitFor(() => {
      expect(within(card).getByTestId('history-chart').dataset.lower).toBe('GPUs held:4');
    });
    expect(query().get('series')).toBe('tenant:vision');

    // A day at one-minute buckets.
    await user.click(within(card).getByText('24 hours'));
    await waitFor(() => {
      expect(within(card).getByTestId('history-chart').dataset.lower).toBe('GPUs held:6');
    });
    expect(query().get('resolution')).toBe('60');
    expect(within(card).getByRole('img').getAttribute('aria-label')).toBe(
      'History over the last 24 hours',
    );
  });
  it('draws the pool topology with its free, stranded and held nodes and the queue', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      ...TOPOLOGY_ROUTES,
      'GET /api/v1/pools/2/topology/': {
        status: 200,
        body: {
          ...TOPOLOGY,
          pool: { id: 2, name: 'ascend-infer' },
          spines: [],
          summary: topologyCounts({}),
        },
      },
      'GET /api/v1/telemetry/snapshot/': { status: 200, body: FRAME },
      'GET /api/v1/telemetry/history/': NO_HISTORY,
    });
    renderApp('/cluster');
    const card = await screen.findByTestId('cluster-topology');
    expect((await within(card).findByTestId('topology-free')).textContent).toContain('11 / 32');
    expect(within(card).getByTestId('topology-stranded').textContent).toContain('3 (27.3%)');
    expect(within(card).getByTestId('topology-largest').textContent).toContain(
      'A800: 8 GPUs in one leaf, 8 in one Scalable Unit, 8 in the pool',
    );
    const queue = within(card).getByTestId('topology-queue');
    expect(queue.textContent).toContain('Queued jobs: 3 (272 GPUs) waiting on:');
    expect(within(queue).getByText('Draining nodes for it: 1')).toBeTruthy();
    const leaf0 = within(card).getByTestId('topology-leaf-leaf0');
    expect(leaf0.textContent).toContain('11 / 16 free · wholly free nodes: 1 · stranded: 3');
    expect(
      within(leaf0).getByRole('img', {
        name: 'a800-001 · A800 · Free · 0 used, 8 free of 8 · held for a waiting large job',
      }),
    ).toBeTruthy();
    const leaf1 = within(card).getByTestId('topology-leaf-leaf1');
    expect(
      within(leaf1).getByRole('img', { name: /^a800-004 · A800 · Out of service .* · cordoned$/ })
        .dataset.state,
    ).toBe('unavailable');
    // Another pool: asked for its own topology, and an empty pool says so.
    await userEvent.click(within(card).getByRole('combobox', { name: 'Pool' }));
    await userEvent.click(await screen.findByTitle('ascend-infer'));
    expect(await within(card).findByText('This pool has no nodes.')).toBeTruthy();
    expect(requests.some((r) => r.path === '/api/v1/pools/2/topology/')).toBe(true);
  });
  it('refetches the topology when the events socket says its pool changed', async () => {
    const { requests } = stubFetch(ADMIN_ROUTES);
    renderApp('/cluster');
    const card = await screen.findByTestId('cluster-topology');
    expect(await within(card).findByTestId('topology-free')).toBeTruthy();
    const fetched = () => requests.filter((r) => r.path === '/api/v1/pools/1/topology/').length;
    expect(fetched()).toBe(1);
    // A platform admin works in no tenant, and still follows the pools.
    const socket = FakeWebSocket.instances.find((s) => s.url.endsWith('/ws/v1/events/'));
    if (socket === undefined) throw new Error('the console opened no events socket');
    act(() => {
      socket.open();
    });
    expect(socket.sent).toEqual([{ action: 'subscribe', topic: 'pools' }]);
    act(() => {
      socket.receive({ type: 'pools.changed', topic: 'pools', seq: 1, data: { ids: [2] } });
    });
    act(() => {
      socket.receive({ type: 'pools.changed', topic: 'pools', seq: 2, data: { ids: [1, 2] } });
    });
    await waitFor(() => {
      expect(fetched()).toBe(2);
    });
    // Another pool changing refetches nothing shown here.
    expect(requests.some((r) => r.path === '/api/v1/pools/2/topology/')).toBe(false);
  });
  it('shows the pool the address names, as the pools table links it', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/pools/2/topology/': {
        status: 200,
        body: { ...TOPOLOGY, pool: { id: 2, name: 'ascend-infer' } },
      },
      'GET /api/v1/telemetry/snapshot/': { status: 200, body: FRAME },
      'GET /api/v1/telemetry/history/': NO_HISTORY,
    });
    renderApp('/cluster?pool=2');
    const card = await screen.findByTestId('cluster-topology');
    expect(await within(card).findByTestId('topology-free')).toBeTruthy();
    expect(requests.filter((r) => r.path.endsWith('/topology/')).map((r) => r.path)).toEqual([
      '/api/v1/pools/2/topology/',
    ]);
  });

  it("opens a GPU's history on its node's page when a platform admin clicks its cell", async () => {
    const node = (id: number, name: string) => ({
      id,
      name,
      pool: 'a800-train',
      accelerator_model: 'A800',
      accelerator_count: 2,
      health: 'healthy',
      cordoned: false,
      is_spare: false,
      open_incidents: 0,
      checks: [],
    });
    const { requests } = stubFetch({
      ...ADMIN_ROUTES,
      // The name filter matches substrings: the exact name is picked out.
      'GET /api/v1/health/nodes/': page([node(12, 'node-b'), node(13, 'node-b2')]),
      'GET /api/v1/health/nodes/12/': { status: 200, body: node(12, 'node-b') },
      'GET /api/v1/health/nodes/12/history/': page([]),
      'GET /api/v1/health/incidents/': page([]),
      'GET /api/v1/telemetry/gpu-history/': {
        status: 200,
        body: {
          node: 'node-b',
          gpu: 1,
          source: 'recent',
          resolution_s: 10,
          kept_s: 3600,
          points: [
            {
              ts: '2026-12-03T10:00:00Z',
              util: 90,
              fb_used_pct: 80,
              sm_active_pct: 70,
              power_w: 300,
              temp_c: 70,
            },
          ],
        },
      },
    });
    const { router } = renderApp('/cluster');
    fireEvent.click(await screen.findByTestId('heatmap-cell-node-b:1'));
    await waitFor(() => {
      expect(router.state.location.pathname).toBe('/health/nodes/12');
    });
    expect(router.state.location.search).toBe('?gpu=1');
    const lookup = requests.find((r) => r.path === '/api/v1/health/nodes/')?.query;
    expect(new URLSearchParams(lookup).get('name')).toBe('node-b');
    const card = await screen.findByTestId('node-gpu-history');
    expect(
      await within(card).findByRole('img', { name: 'GPU 1 of node-b over the last 1 hour' }),
    ).toBeTruthy();
  });

  it('says so when the clicked GPU belongs to no registered node', async () => {
    stubFetch({ ...ADMIN_ROUTES, 'GET /api/v1/health/nodes/': page([]) });
    const { router } = renderApp('/cluster');
    fireEvent.click(await screen.findByTestId('heatmap-cell-node-a:0'));
    expect(await screen.findByText('No node named node-a is registered.')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/cluster');
  });

  it('offers no GPU history to a member', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      ...TOPOLOGY_ROUTES,
      'GET /api/v1/telemetry/snapshot/': {
        status: 200,
        body: { ...FRAME, topic: 'heatmap:vision' },
      },
      'GET /api/v1/telemetry/history/': NO_HISTORY,
    });
    renderApp('/cluster');
    expect(await screen.findByTestId('gpu-heatmap')).toBeTruthy();
    expect(screen.queryByTestId('heatmap-cell-node-a:0')).toBeNull();
  });
});
