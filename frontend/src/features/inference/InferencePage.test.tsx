import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { setLanguage } from '../../lib/i18n';
import { type StubResponse, stubFetch } from '../../test/fetchStub';
import { BOB, makeJob, page, POOLS, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';
import { BASE, REVISION, SERVICE } from './testFixtures';

describe('inference', () => {
  it('lists services', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${BASE}`]: page([SERVICE]),
    });
    renderApp('/inference');
    const table = await screen.findByTestId('services-table');
    await within(table).findByText('qwen-chat');
    expect(
      Array.from(within(table).getAllByRole('row')[1]?.children ?? [], (c) => c.textContent),
    ).toEqual([
      'qwen-chat',
      's3://models/qwen2-7b',
      'Running',
      '2 ready / 3 desired',
      'Concurrency 24',
    ]);
  });

  it('shows latest QPS, latency percentiles and scaling decisions', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${BASE}5/`]: { status: 200, body: SERVICE },
      [`GET ${BASE}5/metrics/`]: page([
        {
          at: '2026-11-30T00:00:10Z',
          qps: 41.5,
          concurrency: 20,
          p50_ms: 180,
          p95_ms: 420,
          p99_ms: 810,
          gpu_util: 0.66,
          gpu_by_replica: { 'zs-inf-5-abc-x': 0.9, 'zs-inf-5-abc-y': 0.42 },
          errors: 83,
          ready_replicas: 2,
          loading_replicas: 1,
          period_s: 10,
        },
        {
          at: '2026-11-30T00:00:00Z',
          qps: 12,
          concurrency: 5,
          p50_ms: 100,
          p95_ms: 200,
          p99_ms: 300,
          gpu_util: 0.2,
          gpu_by_replica: { 'zs-inf-5-abc-x': 0.2 },
          errors: 0,
          ready_replicas: 1,
          loading_replicas: 0,
          period_s: 10,
        },
      ]),
      [`GET ${BASE}5/revisions/`]: page([REVISION]),
      [`GET ${BASE}5/decisions/`]: page([
        {
          id: 1,
          at: '2026-11-30T00:00:05Z',
          current: 2,
          desired: 3,
          metric: 'concurrency',
          observed_stable: 30.25,
          observed_panic: 31,
          panic: false,
          reason: 'scale-up',
          wanted: null,
          limited_by: '',
          limited_detail: [],
        },
        {
          id: 2,
          at: '2026-11-30T00:00:01Z',
          current: 1,
          desired: 2,
          metric: 'concurrency',
          observed_stable: 60,
          observed_panic: 61,
          panic: true,
          reason: 'panic',
          wanted: 5,
          limited_by: "tenant 'acme' has no A800 quota in pool 'p'",
          limited_detail: [{ key: 'noQuota', args: { tenant: 'acme', model: 'A800', pool: 'p' } }],
        },
      ]),
    });
    renderApp('/inference/5');
    expect(await screen.findByText('qwen-chat')).toBeTruthy();
    await screen.findByText('Load above target');
    const value = (key: string) =>
      screen.getByTestId(key).querySelector('.ant-statistic-content')?.textContent;
    expect(value('inference.qps')).toBe('41.5');
    expect(value('inference.p95')).toBe('420');
    expect(value('inference.p99')).toBe('810');
    expect(value('inference.gpuUtil')).toBe('66%');
    expect(value('inference.concurrency')).toBe('20');
    // 83 errors out of 41.5 QPS × 10 s = 415 requests in the latest period.
    expect(value('inference.errors')).toBe('83 (20%)');
    expect(screen.getByText('2 → 3')).toBeTruthy();
    // GPU use of each replica, from the newest sample.
    const perReplica = screen.getByTestId('gpu-per-replica');
    expect(within(perReplica).getByText('zs-inf-5-abc-y')).toBeTruthy();
    expect(
      within(perReplica)
        .getAllByRole('progressbar')
        .map((e) => e.getAttribute('aria-valuenow')),
    ).toEqual(['90', '42']);
    // A scale-up the scheduler admitted only in part says what was asked for.
    expect(screen.getByText('asked 5; admitted fewer')).toBeTruthy();
    expect(screen.getAllByText(/admitted fewer/)).toHaveLength(1);
    const history = screen.getByTestId('inference-history');
    expect(within(history).getByText('History')).toBeTruthy();
    // The samples came newest first; the chart gets them oldest first, on a time axis.
    const chart = await within(history).findByTestId('traffic-chart');
    expect(chart.getAttribute('data-samples')).toBe(
      '2026-11-30T00:00:00Z|12|200|1;2026-11-30T00:00:10Z|41.5|420|2',
    );
    expect(chart.getAttribute('aria-label')).toBe(
      'Line chart of QPS, p95 latency and replicas over the last 2 samples',
    );
    // Why, in the scheduler's words in the reader's language, on hover.
    await userEvent.hover(screen.getByText('asked 5; admitted fewer'));
    expect(await screen.findByText("tenant 'acme' has no A800 quota in pool 'p'")).toBeTruthy();
    await act(() => setLanguage('zh'));
    expect(await screen.findByText('租户 “acme” 在资源池 “p” 中没有 A800 配额')).toBeTruthy();
  });

  it('shows no history chart and no rate without traffic samples', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${BASE}5/`]: { status: 200, body: SERVICE },
      [`GET ${BASE}5/metrics/`]: page([]),
      [`GET ${BASE}5/revisions/`]: page([REVISION]),
      [`GET ${BASE}5/decisions/`]: page([]),
    });
    renderApp('/inference/5');
    const history = await screen.findByTestId('inference-history');
    expect(await within(history).findByText('No traffic samples yet.')).toBeTruthy();
    expect(within(history).queryByTestId('traffic-chart')).toBeNull();
    const value = (key: string) =>
      screen.getByTestId(key).querySelector('.ant-statistic-content')?.textContent;
    expect(value('inference.concurrency')).toBe('—');
    expect(value('inference.errors')).toBe('—');
  });

  it('shows the empty list', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${BASE}`]: page([]),
    });
    renderApp('/inference');
    expect(await screen.findByText('No inference services.')).toBeTruthy();
  });
  it('deploys a service from the create form', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${BASE}`]: [page([]), page([SERVICE])],
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      [`POST ${BASE}`]: { status: 201, body: SERVICE },
    });
    renderApp('/inference');
    expect(await screen.findByText('No inference services.')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: /New service/ }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('Service name'), {
      target: { value: 'qwen-chat' },
    });
    fireEvent.change(within(dialog).getByLabelText('Model'), {
      target: { value: 's3://models/qwen2-7b' },
    });
    fireEvent.change(within(dialog).getByLabelText('Max replicas'), { target: { value: '6' } });
    fireEvent.mouseDown(within(dialog).getByRole('combobox', { name: 'Resource pool' }));
    fireEvent.click(await screen.findByTitle('a800-train'));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Deploy' }));
    await waitFor(() => {
      expect(requests.find((r) => r.method === 'POST')?.body).toEqual({
        name: 'qwen-chat',
        runtime_image: 'vllm/vllm-openai:v0.6.3',
        model_uri: 's3://models/qwen2-7b',
        pool: 1,
        accelerators: 1,
        min_replicas: 1,
        max_replicas: 6,
      });
    });
    const table = await screen.findByTestId('services-table');
    expect(await within(table).findByText('qwen-chat')).toBeTruthy();
  });

  describe('stopping a service', () => {
    const routes = (service: StubResponse | StubResponse[]) => ({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${BASE}5/`]: service,
      [`GET ${BASE}5/metrics/`]: page([]),
      [`GET ${BASE}5/revisions/`]: page([REVISION]),
      [`GET ${BASE}5/decisions/`]: page([]),
    });

    it('cancels the service job after confirmation', async () => {
      const user = userEvent.setup();
      const { requests } = stubFetch({
        ...routes([
          { status: 200, body: SERVICE },
          { status: 200, body: { ...SERVICE, state: 'cancelled', ready_replicas: 0 } },
        ]),
        'POST /api/v1/tenants/vision/jobs/30/cancel/': {
          status: 200,
          body: makeJob({ id: 30, kind: 'inference', state: 'cancelled' }),
        },
      });
      renderApp('/inference/5');
      await user.click(await screen.findByRole('button', { name: /Stop service/ }));
      // Nothing is sent before the user confirms.
      expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
      const confirm = await screen.findByRole('tooltip');
      await user.click(within(confirm).getByRole('button', { name: 'Stop service' }));
      expect(await screen.findByText('Service qwen-chat stopped.')).toBeTruthy();
      // The service is read again: now cancelled, with nothing left to stop.
      await waitFor(() => {
        expect(screen.getByTestId('job-state').getAttribute('data-state')).toBe('cancelled');
      });
      expect(screen.queryByRole('button', { name: /Stop service/ })).toBeNull();
      expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
        '/api/v1/tenants/vision/jobs/30/cancel/',
      ]);
    });

    it("shows the server's message when the cancel is refused", async () => {
      const user = userEvent.setup();
      stubFetch({
        ...routes({ status: 200, body: SERVICE }),
        'POST /api/v1/tenants/vision/jobs/30/cancel/': {
          status: 403,
          body: { detail: "Only the job's owner or a tenant admin can cancel it." },
        },
      });
      renderApp('/inference/5');
      await user.click(await screen.findByRole('button', { name: /Stop service/ }));
      const confirm = await screen.findByRole('tooltip');
      await user.click(within(confirm).getByRole('button', { name: 'Stop service' }));
      expect(
        await screen.findByText("Only the job's owner or a tenant admin can cancel it."),
      ).toBeTruthy();
    });

    it.each([
      ['a finished service', { state: 'cancelled' }],
      ['a failed service', { state: 'failed' }],
      ["another member's service", { owner: 'carol' }],
    ])('offers no stop for %s', async (_, change) => {
      stubFetch(routes({ status: 200, body: { ...SERVICE, ...change } }));
      renderApp('/inference/5');
      expect(await screen.findByTestId('job-state')).toBeTruthy();
      expect(screen.queryByRole('button', { name: /Stop service/ })).toBeNull();
    });
  });

  describe('labels', () => {
    const detail = (service: object) => ({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${BASE}5/`]: { status: 200, body: service },
      [`GET ${BASE}5/metrics/`]: page([]),
      [`GET ${BASE}5/revisions/`]: page([REVISION]),
      [`GET ${BASE}5/decisions/`]: page([
        {
          id: 1,
          at: '2026-11-30T00:00:05Z',
          current: 1,
          desired: 1,
          metric: 'latency',
          observed_stable: 3,
          observed_panic: 3,
          panic: false,
          reason: 'hold (scale-down delay)',
          wanted: null,
          limited_by: '',
        },
        {
          id: 2,
          at: '2026-11-30T00:00:01Z',
          current: 1,
          desired: 2,
          metric: 'tokens',
          observed_stable: 3,
          observed_panic: 3,
          panic: false,
          reason: 'operator-override',
          wanted: null,
          limited_by: '',
        },
      ]),
    });

    it('shows states, metrics and reasons in Chinese, not as codes', async () => {
      await setLanguage('zh');
      stubFetch(detail(SERVICE));
      renderApp('/inference/5');
      const held = (await screen.findByText('缩容延迟期内保持')).closest('tr');
      expect(held && within(held).getByText('p95 延迟')).toBeTruthy();
      expect(screen.getByTestId('job-state').textContent).toBe('运行中');
      expect(screen.getByText('并发 24')).toBeTruthy();
      expect(screen.queryByText('running')).toBeNull();
      expect(screen.queryByText('hold (scale-down delay)')).toBeNull();
      // Codes this build does not know are shown as sent rather than hidden.
      expect(screen.getByText('operator-override')).toBeTruthy();
      expect(screen.getByText('tokens')).toBeTruthy();
      expect(screen.getByTestId('traffic-simulated').textContent).toBe('模拟流量');
      expect(screen.getByRole('button', { name: /停止服务/ })).toBeTruthy();
    });

    it('translates the state in the list', async () => {
      await setLanguage('zh');
      stubFetch({
        'GET /api/v1/auth/session/': sessionOf(BOB),
        [`GET ${BASE}`]: page([{ ...SERVICE, state: 'queued' }]),
      });
      renderApp('/inference');
      const table = await screen.findByTestId('services-table');
      expect(await within(table).findByText('排队中')).toBeTruthy();
      expect(within(table).queryByText('queued')).toBeNull();
    });

    it('labels simulated traffic only on the simulated cluster', async () => {
      stubFetch(detail({ ...SERVICE, simulated: false }));
      renderApp('/inference/5');
      expect(await screen.findByText('Held for the scale-down delay')).toBeTruthy();
      expect(screen.queryByTestId('traffic-simulated')).toBeNull();
    });
  });
});
