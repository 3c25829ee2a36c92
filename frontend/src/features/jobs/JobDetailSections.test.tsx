import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { BOB, makeJob, page, POOLS, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';
import { makeCheckpoint, makeRun, seriesAnswer } from '../experiments/runFixtures';

const JOB = '/api/v1/tenants/vision/jobs/11/';
const RUNS = '/api/v1/tenants/vision/runs/';
const line = (n: number, replica = 'worker-0') => ({
  ts: `2026-11-30T00:00:0${n}Z`,
  replica,
  attempt: 0,
  text: `step ${n} loss 2.${n}`,
});

const NO_REQUEST = {
  requested_at: null,
  reason: '',
  pending: false,
  served_step: null,
  newest_step: 1000,
  newest_path: 's3://ckpt/llama/step-1000',
  newest_completed_at: '2026-11-30T00:10:00Z',
};

function jobRoutes(state: 'running' | 'succeeded', runs: unknown[]) {
  return {
    'GET /api/v1/auth/session/': sessionOf(BOB),
    [`GET ${JOB}`]: { status: 200, body: makeJob({ state, started_at: '2026-11-30T00:00:00Z' }) },
    [`GET ${JOB}events/`]: { status: 200, body: [] },
    [`GET ${JOB}checkpoint/`]: { status: 200, body: NO_REQUEST },
    'GET /api/v1/pools/': { status: 200, body: POOLS },
    [`GET ${RUNS}`]: page(runs),
    [`GET ${JOB}cost/`]: {
      status: 200,
      body: { device_hours: 16.5, cost: '41.25', price_per_device_hour: '2.5000' },
    },
    'GET /api/v1/telemetry/jobs/11/usage/': {
      status: 200,
      body: {
        job: 11,
        gpu_hours: 12.3456,
        mean_util: 81.25,
        mean_power_w: 312.4,
        energy_kwh: 3.856,
        fb_used_peak_mib: 71680,
      },
    },
    'GET /api/v1/telemetry/history/': {
      status: 200,
      body: {
        series: 'job:11',
        resolution_s: 10,
        points: [
          {
            ts: '2026-12-03T10:00:00Z',
            gpus: 8,
            util: 80,
            fb_used_mib: 0,
            power_w: 0,
            temp_max_c: 0,
            extra: { busy: 8 },
          },
        ],
      },
    },
  };
}

describe('job detail: curves, checkpoints and logs', () => {
  it('asks a running job for a checkpoint and shows the request waiting', async () => {
    const PENDING = {
      ...NO_REQUEST,
      requested_at: '2026-11-30T01:00:00Z',
      reason: 'bob: asked on the dashboard',
      pending: true,
    };
    const { requests } = stubFetch({
      ...jobRoutes('running', [makeRun()]),
      [`GET ${RUNS}1/metrics/`]: seriesAnswer(1, { loss: [3, 2.31] }),
      [`GET ${RUNS}1/checkpoints/`]: { status: 200, body: [makeCheckpoint()] },
      [`GET ${JOB}logs/`]: {
        status: 200,
        body: { source: 'simulated', lines: [], truncated: false },
      },
      [`POST ${JOB}checkpoint/`]: { status: 200, body: PENDING },
    });
    renderApp('/jobs/11');
    const card = await screen.findByTestId('job-checkpoints');
    const button = await within(card).findByTestId('request-checkpoint');
    expect(within(card).queryByTestId('checkpoint-request')).toBeNull();
    fireEvent.click(button);
    const popup = (await screen.findByText(/Ask the job to save a checkpoint now/)).closest(
      '.ant-popover',
    );
    if (!(popup instanceof HTMLElement)) throw new Error('no confirmation popup');
    fireEvent.click(within(popup).getByRole('button', { name: 'Request checkpoint' }));
    expect((await within(card).findByTestId('checkpoint-request')).textContent).toMatch(
      /^Requested .+, waiting for the job$/,
    );
    expect(within(card).getByTestId('request-checkpoint').hasAttribute('disabled')).toBe(true);
    expect(requests.filter((r) => r.method === 'POST').map((r) => [r.path, r.body])).toEqual([
      [`${JOB}checkpoint/`, {}],
    ]);
  }, 20_000);

  it('shows KPIs, curves and checkpoints of the job run, and polls logs while running', async () => {
    const { requests } = stubFetch({
      ...jobRoutes('running', [makeRun()]),
      [`GET ${RUNS}1/metrics/`]: seriesAnswer(1, {
        loss: [3, 2.31],
        'perf/mfu': [0.4, 0.412],
        'perf/tokens_per_s': [47000, 48000],
      }),
      [`GET ${RUNS}1/checkpoints/`]: { status: 200, body: [makeCheckpoint()] },
      [`GET ${JOB}logs/`]: [
        { status: 200, body: { source: 'simulated', lines: [line(1)], truncated: false } },
        {
          status: 200,
          body: { source: 'simulated', lines: [line(1), line(2, 'worker-1')], truncated: true },
        },
      ],
    });
    renderApp('/jobs/11');

    const curves = await screen.findByTestId('job-curves');
    const kpis = await within(curves).findByTestId('run-kpis');
    expect(within(kpis).getByTestId('kpi-loss').textContent).toContain('2.31');
    expect(within(kpis).getByTestId('kpi-throughput').textContent).toContain('48,000');
    expect(within(kpis).getByTestId('kpi-mfu').textContent).toContain('41.2%');
    const lossChart = await within(curves).findByTestId('curve-loss');
    expect(lossChart.dataset.lines).toBe('llama-lr3e-4:3|2.31');
    expect(
      within(curves)
        .getAllByTestId('curve-title')
        .map((e) => e.textContent),
    ).toEqual(['loss', 'perf/mfu', 'perf/tokens_per_s']);
    expect(new URLSearchParams(requests.find((r) => r.path === RUNS)?.query).get('job')).toBe('11');
    await within(screen.getByTestId('job-checkpoints')).findByText('s3://ckpt/llama/step-1000');

    const logs = screen.getByTestId('job-logs');
    expect((await within(logs).findAllByTestId('log-line')).map((e) => e.textContent)).toEqual([
      '2026-11-30 00:00:01 [worker-0] step 1 loss 2.1',
    ]);
    expect(within(logs).getByTestId('logs-source').textContent).toBe('Simulated');
    expect(
      new URLSearchParams(requests.find((r) => r.path === `${JOB}logs/`)?.query).get('tail'),
    ).toBe('500');
    // The next poll (3 s later) brings the new line.
    await waitFor(
      () => {
        expect(within(logs).getAllByTestId('log-line')).toHaveLength(2);
      },
      { timeout: 8000 },
    );
    expect(within(logs).getByTestId('logs-truncated')).toBeTruthy();

    // Filter to one replica.
    fireEvent.mouseDown(within(logs).getByRole('combobox', { name: 'Replica' }));
    fireEvent.click(await screen.findByTitle('worker-1'));
    await waitFor(() => {
      expect(
        within(logs)
          .getAllByTestId('log-line')
          .map((e) => e.textContent),
      ).toEqual(['2026-11-30 00:00:02 [worker-1] step 2 loss 2.2']);
    });
  }, 20_000);

  it('says when a job has no run and does not poll logs of a finished job', async () => {
    const { requests } = stubFetch({
      ...jobRoutes('succeeded', []),
      [`GET ${JOB}logs/`]: {
        status: 200,
        body: { source: 'kubernetes', lines: [], truncated: false },
      },
    });
    renderApp('/jobs/11');
    expect(await screen.findByTestId('job-no-run')).toBeTruthy();
    // A finished job's GPU use: the collector's totals, then its GPUs over time.
    const usage = screen.getByTestId('job-usage');
    // Its own title: the utilisation chart below is "GPU use".
    expect(within(usage).getByText('GPU-hours and cost')).toBeTruthy();
    // What it cost: the GPU-hours it reserved at its pool's price.
    expect((await within(usage).findByTestId('usage-reserved')).textContent).toContain('16.5');
    expect(within(usage).getByTestId('usage-cost').textContent).toBe('CostCN¥41.25');
    expect(within(usage).getByTestId('usage-price').textContent).toBe('Price per GPU-hourCN¥2.50');
    expect((await within(usage).findByTestId('usage-gpu-hours')).textContent).toContain('12.35');
    expect(within(usage).getByTestId('usage-util').textContent).toContain('81.3 %');
    expect(within(usage).getByTestId('usage-power').textContent).toContain('312 W');
    expect(within(usage).getByTestId('usage-energy').textContent).toContain('3.86 kWh');
    expect(within(usage).getByTestId('usage-memory').textContent).toContain('70 GiB');
    const chart = await within(screen.getByTestId('job-history')).findByTestId('history-chart');
    expect(chart.dataset.upper).toBe('GPU utilization:80');
    expect(chart.dataset.lower).toBe('GPUs held:8');
    const series = requests.find((r) => r.path === '/api/v1/telemetry/history/')?.query;
    expect(new URLSearchParams(series).get('series')).toBe('job:11');
    // No idle flag: the tenant's idle policy is not asked for.
    expect(requests.some((r) => r.path.endsWith('/governance/policy/'))).toBe(false);
    expect(await screen.findByTestId('logs-empty')).toBeTruthy();
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(requests.filter((r) => r.path === `${JOB}logs/`)).toHaveLength(1);
  }, 15_000);
});
