import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { BOB, page, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';
import { makeCheckpoint, makeRun, seriesAnswer } from './runFixtures';

const RUNS = '/api/v1/tenants/vision/runs/';
const RUN_A = makeRun({ id: 1, name: 'lr-3e-4', config: { lr: 0.0003, seed: 7 } });
const RUN_B = makeRun({
  id: 2,
  name: 'lr-1e-3',
  job: null,
  state: 'finished',
  config: { lr: 0.001, seed: 7 },
  keys: [{ name: 'loss', count: 3, first_step: 0, last_step: 2, last_value: 2.9 }],
});

function rowTexts(testId: string): string[][] {
  return within(screen.getByTestId(testId))
    .getAllByRole('row')
    .map((row) => Array.from(row.children, (cell) => cell.textContent));
}

describe('experiments', () => {
  it('compares runs from a deep link: overlayed curves, hyperparameters, parallel coordinates', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${RUNS}`]: page([RUN_B, RUN_A]),
      [`GET ${RUNS}1/metrics/`]: seriesAnswer(1, {
        loss: [3, 2.5, 2.31],
        'perf/mfu': [0.4, 0.41, 0.412],
      }),
      [`GET ${RUNS}2/metrics/`]: seriesAnswer(2, { loss: [3.1, 3.0, 2.9] }),
    });
    renderApp('/experiments?runs=1,2');

    const loss = await screen.findByTestId('compare-curve-loss');
    expect(loss.dataset.lines).toBe('#1 lr-3e-4:3|2.5|2.31;#2 lr-1e-3:3.1|3|2.9');
    expect(screen.getByTestId('compare-curve-perf/mfu').dataset.lines).toBe(
      '#1 lr-3e-4:0.4|0.41|0.412',
    );
    const metricsQuery = new URLSearchParams(
      requests.find((r) => r.path === `${RUNS}1/metrics/`)?.query,
    );
    expect([metricsQuery.get('keys'), metricsQuery.get('max_points')]).toEqual([
      'loss,perf/mfu,perf/tokens_per_s',
      '500',
    ]);

    // The differing hyperparameter first, then the shared one, then last metric values.
    expect(rowTexts('hyperparam-table')).toEqual([
      ['Parameter', '#1 lr-3e-4', '#2 lr-1e-3'],
      ['lr', '3e-4', '0.001'],
      ['seed', '7', '7'],
      ['Last loss', '2.31', '2.9'],
      ['Last perf/mfu', '0.412', '—'],
      ['Last perf/tokens_per_s', '48000', '—'],
    ]);
    fireEvent.click(screen.getByRole('switch', { name: 'Only differences' }));
    expect(rowTexts('hyperparam-table').map((r) => r[0])).toEqual([
      'Parameter',
      'lr',
      'Last loss',
      'Last perf/mfu',
      'Last perf/tokens_per_s',
    ]);

    const parallel = await screen.findByTestId('parallel-chart');
    expect(parallel.dataset.axes).toBe('lr,Final loss');
    expect(parallel.dataset.rows).toBe('0.0003|2.31;0.001|2.9');
  });

  it('sends the step range to the API and keeps the selection in the URL', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${RUNS}`]: page([RUN_B, RUN_A]),
      [`GET ${RUNS}1/metrics/`]: seriesAnswer(1, { loss: [3] }),
      [`GET ${RUNS}2/metrics/`]: seriesAnswer(2, { loss: [3] }),
    });
    const { router } = renderApp('/experiments?runs=1');
    await screen.findByTestId('compare-curve-loss');
    expect(screen.getByText('Select one more run to overlay its curves.')).toBeTruthy();

    fireEvent.click(screen.getByRole('checkbox', { name: 'Select run lr-1e-3 for comparison' }));
    await waitFor(() => {
      expect(router.state.location.search).toBe('?runs=1%2C2');
    });

    fireEvent.change(screen.getByLabelText('From step'), { target: { value: '100' } });
    fireEvent.change(screen.getByLabelText('To step'), { target: { value: '900' } });
    await waitFor(() => {
      const last = requests.filter((r) => r.path === `${RUNS}2/metrics/`).at(-1);
      const q = new URLSearchParams(last?.query);
      expect([q.get('step_min'), q.get('step_max')]).toEqual(['100', '900']);
    });
  });

  it('walks older runs a page at a time, keeps the selection across pages, finds by name', async () => {
    const user = userEvent.setup();
    const older = `http://localhost:3000${RUNS}?cursor=r2&page_size=50`;
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${RUNS}`]: [
        { status: 200, body: { next: older, previous: null, results: [RUN_B] } },
        page([RUN_A]),
        page([RUN_A]),
      ],
      // The selected run of the first page, by id once the list shows another page.
      [`GET ${RUNS}2/`]: { status: 200, body: RUN_B },
      [`GET ${RUNS}1/metrics/`]: seriesAnswer(1, { loss: [3, 2.5] }),
      [`GET ${RUNS}2/metrics/`]: seriesAnswer(2, { loss: [3.1, 3.0] }),
    });
    const { router } = renderApp('/experiments');
    await user.click(
      await screen.findByRole('checkbox', { name: 'Select run lr-1e-3 for comparison' }),
    );
    await user.click(screen.getByTestId('runs-page-older'));
    await user.click(
      await screen.findByRole('checkbox', { name: 'Select run lr-3e-4 for comparison' }),
    );
    await waitFor(() => {
      expect(router.state.location.search).toBe('?runs=2%2C1');
    });
    const loss = await screen.findByTestId('compare-curve-loss');
    await waitFor(() => {
      expect(loss.dataset.lines).toBe('#2 lr-1e-3:3.1|3;#1 lr-3e-4:3|2.5');
    });
    await user.type(screen.getByRole('searchbox', { name: 'Search by name' }), 'lr-3{Enter}');
    await waitFor(() => {
      expect(requests.filter((r) => r.path === RUNS).map((r) => r.query)).toEqual([
        'page_size=50',
        'page_size=50&cursor=r2',
        'page_size=50&name=lr-3',
      ]);
    });
  });

  it('shows the empty states', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${RUNS}`]: page([]),
    });
    renderApp('/experiments');
    expect(await screen.findByText(/No runs yet/)).toBeTruthy();
    expect(screen.getByTestId('compare-empty')).toBeTruthy();
  });

  it('opens one run by deep link with KPIs, hyperparameters and checkpoints', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${RUNS}1/`]: { status: 200, body: makeRun() },
      [`GET ${RUNS}1/metrics/`]: seriesAnswer(1, {
        loss: [3, 2.31],
        'perf/mfu': [0.4, 0.412],
        'perf/tokens_per_s': [47000, 48000],
      }),
      [`GET ${RUNS}1/checkpoints/`]: { status: 200, body: [makeCheckpoint()] },
    });
    renderApp('/experiments/runs/1');

    const kpis = await screen.findByTestId('run-kpis');
    expect(within(kpis).getByTestId('kpi-loss').textContent).toContain('2.31');
    expect(within(kpis).getByTestId('kpi-mfu').textContent).toContain('41.2%');
    expect(within(kpis).getByTestId('kpi-throughput').textContent).toContain('48,000');
    const dbg = await screen.findByTestId('curve-perf/tokens_per_s');
    expect(dbg.dataset.lines).toBe('llama-lr3e-4:47000|48000');
    const config = screen.getByTestId('run-config');
    expect(within(config).getByText('optimizer.name')).toBeTruthy();
    expect(within(config).getByText('adamw')).toBeTruthy();
    await within(screen.getByTestId('checkpoints-table')).findByText('s3://ckpt/llama/step-1000');
    expect(rowTexts('checkpoints-table')[1]?.slice(0, 3)).toEqual(['1000', 'Complete', '3 GiB']);
  });
});
