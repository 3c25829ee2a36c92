import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import type { Session } from '../../lib/apiTypes';
import { setLanguage } from '../../lib/i18n';
import { stubFetch } from '../../test/fetchStub';
import { BOB, makeJob, page, POOLS, sessionOf } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';
import { RUNNING_REFETCH_MS } from './api';
import { makeResult, makeSweep, makeSweepDetail, RESULTS, SWEEPS } from './fixtures';

const DETAIL = `${SWEEPS}5/`;

const VIEWER: Session = {
  ...BOB,
  memberships: [{ tenant: { id: 1, slug: 'vision', name: 'Vision Lab' }, role: 'viewer' }],
};

/** A member of the tenant who did not submit the sweep. */
const CAROL: Session = {
  ...BOB,
  user: { ...BOB.user, id: 9, username: 'carol', display_name: 'Carol' },
};

function rowTexts(testId: string): string[][] {
  return within(screen.getByTestId(testId))
    .getAllByRole('row')
    .map((row) => Array.from(row.children, (cell) => cell.textContent));
}

describe('sweeps list', () => {
  it('lists the sweeps with their progress and best trial, and filters by state', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${SWEEPS}`]: page([
        makeSweep({ best: RESULTS[2] ?? null }),
        makeSweep({
          id: 4,
          name: 'bs-grid',
          method: 'grid',
          owner: 'alice',
          state: 'finished',
          counts: {
            waiting: 0,
            active: 0,
            succeeded: 3,
            failed: 0,
            cancelled: 0,
            stopped_early: 1,
          },
          finished_at: '2026-12-01T09:00:00Z',
        }),
      ]),
    });
    renderApp('/sweeps');
    await screen.findByText('bs-grid');
    const rows = rowTexts('sweeps-table');
    expect(rows[0]).toEqual(['Name', 'Method', 'State', 'Trials', 'Best loss', 'Owner', 'Created']);
    expect(rows.slice(1).map((r) => r.slice(0, 6))).toEqual([
      [
        'lr-search',
        'Random',
        'Running',
        '1 succeeded · 1 failed · 2 active · 2 waiting',
        '0.31 (trial #3)',
        'bob',
      ],
      ['bs-grid', 'Grid', 'Finished', '3 succeeded · 1 stopped early', '—', 'alice'],
    ]);
    // A trial stopped early is done: bs-grid's bar is full.
    expect(
      within(screen.getByTestId('sweep-progress-4'))
        .getByRole('progressbar')
        .getAttribute('aria-valuenow'),
    ).toBe('100');
    expect(screen.getByTestId('sweep-link-5').getAttribute('href')).toBe('/sweeps/5');
    expect(screen.getByRole('button', { name: /Submit a sweep/ })).toBeTruthy();

    fireEvent.mouseDown(screen.getByRole('combobox', { name: 'State' }));
    fireEvent.click(await screen.findByTitle('Stopped'));
    await waitFor(() => {
      expect(requests.filter((r) => r.path === SWEEPS).map((r) => r.query)).toEqual([
        'page_size=50',
        'state=stopped&page_size=50',
      ]);
    });
  });

  it('names the metric in each cell when the sweeps rank by different ones', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${SWEEPS}`]: page([
        makeSweep({ best: RESULTS[2] ?? null }),
        makeSweep({
          id: 4,
          name: 'acc-search',
          metric: 'accuracy',
          goal: 'max',
          best: makeResult(2, { lr: 0.1 }, { value: 0.875, rank: 1 }),
        }),
      ]),
    });
    renderApp('/sweeps');
    await screen.findByText('acc-search');
    expect(rowTexts('sweeps-table').map((r) => r[4])).toEqual([
      'Best value',
      'loss 0.31 (trial #3)',
      'accuracy 0.875 (trial #2)',
    ]);
  });

  it('offers viewers no submit button, and shows the sweeps in Chinese', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(VIEWER),
      [`GET ${SWEEPS}`]: page([makeSweep()]),
    });
    await setLanguage('zh');
    renderApp('/sweeps');
    await screen.findByText('lr-search');
    expect(screen.getByRole('heading', { name: '超参搜索' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: /提交超参搜索/ })).toBeNull();
    expect(rowTexts('sweeps-table')[1]?.slice(1, 4)).toEqual([
      '随机',
      '运行中',
      '成功 1 · 失败 1 · 进行中 2 · 待开始 2',
    ]);
  });
});

describe('sweep page', () => {
  function routes(
    session: Session,
    detail = makeSweepDetail(),
    extra: Record<string, unknown> = {},
  ) {
    return {
      'GET /api/v1/auth/session/': sessionOf(session),
      [`GET ${DETAIL}`]: { status: 200, body: detail },
      ...extra,
    };
  }

  it('ranks the trials, highlights the best, charts the parameters and links their runs', async () => {
    stubFetch(routes(BOB));
    renderApp('/sweeps/5');
    await screen.findByTestId('sweep-results');
    expect(screen.getByRole('heading', { name: 'lr-search (sweep #5)' })).toBeTruthy();
    const rows = rowTexts('sweep-results');
    expect(rows[0]).toEqual(['Rank', 'Trial', 'lr', 'opt', 'Job', 'loss', 'Step']);
    expect(rows.slice(1)).toEqual([
      ['1Best', '#3', '1e-4', 'adam', 'lr-search-3 Running', '0.31', '600'],
      ['2', '#2', '2e-5', 'lion', 'lr-search-2 Succeeded', '0.52', '1000'],
      ['—', '#1', '3e-4', 'adam', 'lr-search-1 Failed', '—', '—'],
      ['—', '#4', '7e-4', 'lion', 'lr-search-4 Queued', '—', '—'],
      ['—', '#5', '5e-5', 'adam', 'Waiting', '—', '—'],
      ['—', '#6', '9e-4', 'lion', 'Waiting', '—', '—'],
    ]);
    const table = screen.getByTestId('sweep-results');
    const best = table.querySelectorAll('tr[data-best="true"]');
    expect(best).toHaveLength(1);
    expect(best[0]?.textContent).toContain('#3');
    expect(within(table).getByRole('link', { name: 'lr-search-3' }).getAttribute('href')).toBe(
      '/jobs/43',
    );

    const summary = screen.getByTestId('sweep-summary');
    expect(screen.getByTestId('sweep-metric').textContent).toBe(
      'loss, lower is better · each trial by its newest value',
    );
    expect(within(summary).getByText('up to 2 trials')).toBeTruthy();
    expect(screen.getByTestId('sweep-count-waiting').textContent).toContain('2');
    expect(screen.getByTestId('sweep-early-stop').textContent).toBe('Off');
    expect(screen.queryByTestId('sweep-note')).toBeNull();

    // The chart: a numeric axis for lr, a category axis for opt, then loss; the trials that
    // reported it, best first.
    const chart = await screen.findByTestId('parallel-chart');
    expect(chart.dataset.axes).toBe('lr,opt,loss');
    expect(chart.dataset.rows).toBe('0.0001|adam|0.31;0.00002|lion|0.52');
    // The compare page with the trials' runs, best first.
    expect(screen.getByTestId('sweep-compare').getAttribute('href')).toBe(
      '/experiments?runs=73,72,71',
    );
    // The server's CSV of every trial, downloaded by the browser.
    const csv = screen.getByTestId('sweep-export');
    expect(csv.getAttribute('href')).toBe('/api/v1/tenants/vision/sweeps/5/csv/');
    expect(csv.hasAttribute('download')).toBe(true);
    expect(csv.textContent).toBe('Download CSV');
  });

  it('ranked by the best value over the steps, says so and shows the newest beside it', async () => {
    // Trial 2's best loss (0.25 at step 400) beats trial 3's; its newest (0.52) does not.
    const results = RESULTS.map((r) =>
      r.index === 2
        ? { ...r, value: 0.25, step: 400, rank: 1 }
        : r.index === 3
          ? { ...r, rank: 2 }
          : r,
    );
    stubFetch(routes(BOB, makeSweepDetail({ rank_by: 'best' }, results)));
    const { unmount } = renderApp('/sweeps/5');
    await screen.findByTestId('sweep-results');
    expect(screen.getByTestId('sweep-metric').textContent).toBe(
      'loss, lower is better · each trial by its best value over its steps',
    );
    const rows = rowTexts('sweep-results');
    expect(rows[0]).toEqual(['Rank', 'Trial', 'lr', 'opt', 'Job', 'loss (best)', 'Step', 'Newest']);
    expect(rows.slice(1, 3)).toEqual([
      ['1Best', '#2', '2e-5', 'lion', 'lr-search-2 Succeeded', '0.25', '400', '0.52'],
      ['2', '#3', '1e-4', 'adam', 'lr-search-3 Running', '0.31', '600', '0.31'],
    ]);
    unmount();
    await setLanguage('zh');
    renderApp('/sweeps/5');
    expect((await screen.findByTestId('sweep-metric')).textContent).toBe(
      'loss，越小越好 · 按每个试验在各步中的最佳值排名',
    );
    expect(rowTexts('sweep-results')[0]?.slice(-3)).toEqual(['loss（最佳）', '步数', '最新值']);
  });

  it('says how it stops trials early, and which it stopped', async () => {
    // Trial 2 was stopped at step 200, its loss then worse than the others' median.
    const results = RESULTS.map((r) =>
      r.index === 2
        ? {
            ...r,
            job: { id: 42, name: 'lr-search-2', state: 'cancelled' as const },
            step: 200,
            stopped_step: 200,
          }
        : r,
    );
    const detail = makeSweepDetail(
      {
        early_stop: 'median',
        stop_after_step: 200,
        stop_min_trials: 2,
        counts: { waiting: 2, active: 2, succeeded: 0, failed: 1, cancelled: 0, stopped_early: 1 },
      },
      results,
    );
    stubFetch(routes(BOB, detail));
    renderApp('/sweeps/5');
    await screen.findByTestId('sweep-results');
    expect(screen.getByTestId('sweep-early-stop').textContent).toBe(
      'Median rule after step 200, judged against at least 2 other trials',
    );
    expect(screen.getByTestId('sweep-count-stopped_early').textContent).toBe('Stopped early1');
    expect(screen.getByTestId('sweep-count-cancelled').textContent).toBe('Cancelled0');
    expect(rowTexts('sweep-results')[2]).toEqual([
      '2',
      '#2',
      '2e-5',
      'lion',
      'lr-search-2 CancelledStopped early at step 200',
      '0.52',
      '200',
    ]);
    expect(screen.getByTestId('trial-stopped-2').textContent).toBe('Stopped early at step 200');
    expect(screen.queryByTestId('trial-stopped-3')).toBeNull();
    // Only the best is highlighted.
    const best = screen.getByTestId('sweep-results').querySelectorAll('tr[data-best="true"]');
    expect(Array.from(best, (row) => row.children[1]?.textContent)).toEqual(['#3']);
  });

  it('shows it in Chinese', async () => {
    const results = RESULTS.map((r) => (r.index === 2 ? { ...r, stopped_step: 200 } : r));
    stubFetch(
      routes(BOB, makeSweepDetail({ early_stop: 'median', stop_after_step: 200 }, results)),
    );
    await setLanguage('zh');
    renderApp('/sweeps/5');
    await screen.findByTestId('sweep-results');
    expect(screen.getByTestId('sweep-early-stop').textContent).toBe(
      '中位数规则：自第 200 步起，与至少 3 个其他试验比较',
    );
    expect(screen.getByTestId('trial-stopped-2').textContent).toBe('在第 200 步提前停止');
    expect(screen.getByTestId('sweep-count-stopped_early').textContent).toBe('提前停止0');
  });

  it('says an adaptive sweep chooses its later trials, which show no values until they start', async () => {
    // Trials 5 and 6 come after the startup: chosen when they start.
    const results = RESULTS.map((r) => (r.index > 4 ? { ...r, params: {} } : r));
    stubFetch(routes(BOB, makeSweepDetail({ method: 'tpe', startup_trials: 4 }, results)));
    const { unmount } = renderApp('/sweeps/5');
    await screen.findByTestId('sweep-results');
    expect(screen.getByTestId('sweep-method').textContent).toBe(
      'Adaptive (TPE): the first 4 trials at random, then each chosen from the results when it starts',
    );
    const rows = rowTexts('sweep-results');
    expect(rows.find((row) => row[1] === '#6')?.slice(2, 4)).toEqual(['—', '—']);
    unmount();
    await setLanguage('zh');
    renderApp('/sweeps/5');
    expect((await screen.findByTestId('sweep-method')).textContent).toBe(
      '自适应（TPE）：前 4 个试验随机抽取，之后每个在开始时根据已有结果选择',
    );
  });

  it('says how successive halving stops trials, in English and Chinese', async () => {
    const detail = makeSweepDetail({
      early_stop: 'asha',
      stop_after_step: 500,
      reduction_factor: 3,
      stop_min_trials: 1,
    });
    stubFetch(routes(BOB, detail));
    const { unmount } = renderApp('/sweeps/5');
    expect((await screen.findByTestId('sweep-early-stop')).textContent).toBe(
      'Successive halving (ASHA): at steps 500, 1500, 4500, …, only the best 1/3 of the trials go on, judged against at least 1 other trial',
    );
    unmount();
    await setLanguage('zh');
    renderApp('/sweeps/5');
    expect((await screen.findByTestId('sweep-early-stop')).textContent).toBe(
      '逐次减半（ASHA）：在第 500、1500、4500、… 步只有最好的 1/3 的试验继续，与至少 1 个其他试验比较',
    );
  });

  it('says how many halving brackets run side by side, where each starts, and whose each trial is', async () => {
    const detail = makeSweepDetail(
      { early_stop: 'asha', stop_after_step: 250, reduction_factor: 2, brackets: 3 },
      RESULTS.map((r) => ({ ...r, bracket: ((r.index - 1) % 3) + 1 })),
    );
    stubFetch(routes(BOB, detail));
    const { unmount } = renderApp('/sweeps/5');
    expect((await screen.findByTestId('sweep-early-stop')).textContent).toBe(
      'Successive halving (ASHA): at steps 250, 500, 1000, …, only the best 1/2 of the trials go on, judged against at least 3 other trials; 3 brackets side by side (Hyperband), more trials in those that stop earlier, their first rungs at steps 250, 500, 1000',
    );
    const rows = rowTexts('sweep-results');
    expect(rows[0]?.slice(4, 7)).toEqual(['Job', 'Bracket', 'loss']);
    expect(rows.slice(1).map((row) => [row[1], row[5]])).toEqual([
      ['#3', '3'],
      ['#2', '2'],
      ['#1', '1'],
      ['#4', '1'],
      ['#5', '2'],
      ['#6', '3'],
    ]);
    unmount();
    await setLanguage('zh');
    renderApp('/sweeps/5');
    expect((await screen.findByTestId('sweep-early-stop')).textContent).toBe(
      '逐次减半（ASHA）：在第 250、500、1000、… 步只有最好的 1/2 的试验继续，与至少 3 个其他试验比较；3 组并行（Hyperband），越早淘汰的组分到越多试验，各组的第一个检查点在第 250、500、1000 步',
    );
  });

  it('lets its owner cancel it while it runs, after confirming', async () => {
    const user = userEvent.setup();
    const cancelled = makeSweepDetail({
      state: 'cancelled',
      finished_at: '2026-12-01T10:00:00Z',
    });
    const { requests } = stubFetch(
      routes(BOB, makeSweepDetail(), {
        [`POST ${DETAIL}cancel/`]: { status: 200, body: cancelled },
      }),
    );
    renderApp('/sweeps/5');
    await user.click(await screen.findByRole('button', { name: /Cancel sweep/ }));
    const confirm = await screen.findByRole('tooltip');
    expect(confirm.textContent).toContain('No more trials start');
    expect(requests.filter((r) => r.method === 'POST')).toHaveLength(0);
    await user.click(within(confirm).getByRole('button', { name: 'Cancel sweep' }));
    await waitFor(() => {
      expect(screen.getAllByTestId('sweep-state')[0]?.dataset.state).toBe('cancelled');
    });
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      `${DETAIL}cancel/`,
    ]);
    // Ended: nothing to cancel.
    expect(screen.queryByRole('button', { name: /Cancel sweep/ })).toBeNull();
  });

  it('offers cancel to tenant admins, not to other members or viewers', async () => {
    for (const [session, offered] of [
      [ALICE, true],
      [CAROL, false],
      [VIEWER, false],
    ] as const) {
      stubFetch(routes(session));
      const view = renderApp('/sweeps/5');
      await screen.findByTestId('sweep-results');
      expect(
        screen.queryByRole('button', { name: /Cancel sweep/ }) !== null,
        session.user.username,
      ).toBe(offered);
      view.unmount();
    }
  });

  it('says why a stopped sweep stopped, and offers no cancel', async () => {
    const note = 'Trial 3 was refused: pool: No such pool.';
    stubFetch(routes(BOB, makeSweepDetail({ state: 'stopped', note })));
    renderApp('/sweeps/5');
    const alert = await screen.findByTestId('sweep-note');
    expect(alert.textContent).toBe(`The sweep stopped: no more trials start.${note}`);
    expect(screen.queryByRole('button', { name: /Cancel sweep/ })).toBeNull();
  });

  it('reads a running sweep again every 5 s, until it ends', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      // Trial 4 reports the lowest loss, and the sweep finishes.
      const rank = new Map([
        [4, 1],
        [3, 2],
        [2, 3],
      ]);
      const later = makeSweepDetail(
        { state: 'finished', finished_at: '2026-12-01T10:00:00Z' },
        RESULTS.map((r) =>
          r.index === 4
            ? { ...r, value: 0.2, step: 100, rank: 1 }
            : { ...r, rank: rank.get(r.index) ?? null },
        ),
      );
      const { requests } = stubFetch(
        routes(BOB, makeSweepDetail(), {
          [`GET ${DETAIL}`]: [
            { status: 200, body: makeSweepDetail() },
            { status: 200, body: later },
          ],
        }),
      );
      renderApp('/sweeps/5');
      await screen.findByTestId('sweep-results');
      expect(rowTexts('sweep-results')[1]?.[1]).toBe('#3');
      await act(() => vi.advanceTimersByTimeAsync(RUNNING_REFETCH_MS));
      await waitFor(() => {
        expect(rowTexts('sweep-results')[1]?.[1]).toBe('#4');
      });
      expect(screen.getAllByTestId('sweep-state')[0]?.dataset.state).toBe('finished');
      await act(() => vi.advanceTimersByTimeAsync(3 * RUNNING_REFETCH_MS));
      expect(requests.filter((r) => r.path === DETAIL)).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('shows its job template on demand', async () => {
    const user = userEvent.setup();
    stubFetch(routes(BOB));
    renderApp('/sweeps/5');
    await screen.findByTestId('sweep-results');
    await user.click(screen.getByText('Job template'));
    const template = await within(screen.getByTestId('sweep-template')).findByText(/"image"/);
    expect(template.textContent).toContain('"args": [\n    "--lr",\n    "{{lr}}",');
  });

  it('says when no trial has reported the metric yet', async () => {
    stubFetch(
      routes(BOB, makeSweepDetail({}, [makeResult(1, { lr: 0.1 }), makeResult(2, { lr: 0.2 })])),
    );
    renderApp('/sweeps/5');
    expect((await screen.findByTestId('sweep-chart-empty')).textContent).toContain(
      'No trial has reported loss yet.',
    );
    expect(screen.queryByTestId('sweep-compare')).toBeNull();
  });
});

describe('job of a sweep', () => {
  it("links a trial's job to its sweep", async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/tenants/vision/jobs/43/': {
        status: 200,
        body: makeJob({
          id: 43,
          name: 'lr-search-3',
          trial: { sweep: 5, sweep_name: 'lr-search', index: 3 },
        }),
      },
      'GET /api/v1/tenants/vision/jobs/43/events/': { status: 200, body: [] },
    });
    const { router } = renderApp('/jobs/43');
    const link = await screen.findByTestId('job-trial');
    expect(link.textContent).toBe('Trial 3 of sweep lr-search');
    expect(link.getAttribute('href')).toBe('/sweeps/5');
    await userEvent.setup().click(link);
    await waitFor(() => {
      expect(router.state.location.pathname).toBe('/sweeps/5');
    });
  });

  it('shows no sweep for other jobs', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/tenants/vision/jobs/11/': { status: 200, body: makeJob() },
      'GET /api/v1/tenants/vision/jobs/11/events/': { status: 200, body: [] },
    });
    renderApp('/jobs/11');
    await screen.findByTestId('job-summary');
    expect(screen.queryByTestId('job-trial')).toBeNull();
  });
});
