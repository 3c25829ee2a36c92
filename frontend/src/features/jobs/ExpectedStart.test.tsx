import { act, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { setLanguage } from '../../lib/i18n';
import { BOB, makeJob, page, POOLS, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';
import { QUEUED_REFETCH_MS } from './api';
import { roughWait, secondsUntilStart } from './helpers';

const HOUR_MS = 3_600_000;

/** A queued job the forecast starts ``ms`` from now, worked out 20 s ago. */
function forecastIn(ms: number) {
  return makeJob({
    queue_position: 2,
    pending_code: 'capacity',
    pending_message: 'Waiting for 16 A800 in a800-train',
    expected_start_at: new Date(Date.now() + ms).toISOString(),
    expected_start_as_of: new Date(Date.now() - 20_000).toISOString(),
  });
}

function detail(job: ReturnType<typeof makeJob>) {
  stubFetch({
    'GET /api/v1/auth/session/': sessionOf(BOB),
    'GET /api/v1/pools/': { status: 200, body: POOLS },
    'GET /api/v1/tenants/vision/jobs/11/': { status: 200, body: job },
    'GET /api/v1/tenants/vision/jobs/11/events/': { status: 200, body: [] },
  });
  renderApp('/jobs/11');
}

describe('expected start of a queued job', () => {
  it('says when the job is expected to start, and what the forecast assumes', async () => {
    detail(forecastIn(2 * HOUR_MS + 30_000));
    const pending = await screen.findByTestId('pending-reason');
    const text = within(pending).getByTestId('expected-start').textContent;
    expect(text).toMatch(/^Expected to start around \d\d\/\d\d\/\d{4}, \d\d:\d\d \(in 2 h\)\. /);
    expect(text).toContain('runs to its declared runtime limits');
  });

  it('says it in Chinese', async () => {
    await setLanguage('zh');
    detail(forecastIn(90 * 60_000 + 30_000));
    const pending = await screen.findByTestId('pending-reason');
    expect(within(pending).getByTestId('expected-start').textContent).toMatch(
      /^预计于 .+ 左右开始（1小时30分钟后）。/,
    );
  });

  it('says when no start is expected within the horizon, and nothing before a forecast', async () => {
    detail(makeJob({ queue_position: 1, expected_start_as_of: '2026-11-30T00:00:00Z' }));
    expect((await screen.findByTestId('expected-start')).textContent).toMatch(
      /^No start expected within 7 days: work it waits for declares no runtime limit/,
    );
  });

  it('shows no forecast on a job without one', async () => {
    detail(makeJob({ queue_position: 1, pending_message: 'Waiting' }));
    await screen.findByTestId('pending-reason');
    expect(screen.queryByTestId('expected-start')).toBeNull();
  });

  it('reads a queued job again, so the first forecast shows without a reload', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      const { requests } = stubFetch({
        'GET /api/v1/auth/session/': sessionOf(BOB),
        'GET /api/v1/pools/': { status: 200, body: POOLS },
        'GET /api/v1/tenants/vision/jobs/11/': [
          { status: 200, body: makeJob({ queue_position: 1, pending_message: 'Waiting' }) },
          { status: 200, body: forecastIn(2 * HOUR_MS + 30_000) },
        ],
        'GET /api/v1/tenants/vision/jobs/11/events/': { status: 200, body: [] },
      });
      renderApp('/jobs/11');
      await screen.findByTestId('pending-reason');
      expect(screen.queryByTestId('expected-start')).toBeNull();
      await act(() => vi.advanceTimersByTimeAsync(QUEUED_REFETCH_MS));
      expect((await screen.findByTestId('expected-start')).textContent).toContain('(in 2 h)');
      expect(requests.filter((r) => r.path === '/api/v1/tenants/vision/jobs/11/')).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('lists the wait beside the queue position', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/tenants/vision/jobs/': page([
        forecastIn(2 * HOUR_MS + 58 * 60_000), // said to the hour
        makeJob({ ...forecastIn(10_000), id: 12, name: 'soon', expected_start_at: null }),
        makeJob({ ...forecastIn(-5_000), id: 13, name: 'now' }),
        makeJob({ id: 14, name: 'ran', state: 'running', expected_start_at: null }),
      ]),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
    });
    renderApp('/jobs');
    await screen.findByText('ran');
    const shorts = screen.getAllByTestId('expected-start-short').map((e) => e.textContent);
    // #12 has a forecast but no start within the horizon: nothing short to say.
    expect(shorts).toEqual(['· starts in ~3 h', '· starts shortly']);
  });
});

describe('roughWait', () => {
  it('rounds to 5 minutes under an hour and to the hour above, never to zero', () => {
    expect([61, 1000, 3599, 3600, 5399, 5400, 90_000].map(roughWait)).toEqual([
      300, 900, 3600, 3600, 3600, 7200, 90_000,
    ]);
  });
});

describe('secondsUntilStart', () => {
  it('counts from now, never below zero, and is null without a start', () => {
    const at = (iso: string | null, asOf: string | null) => ({
      expected_start_at: iso,
      expected_start_as_of: asOf,
    });
    const now = Date.parse('2026-12-01T10:00:00Z');
    expect(secondsUntilStart(at('2026-12-01T12:00:00Z', '2026-12-01T09:59:00Z'), now)).toBe(7200);
    expect(secondsUntilStart(at('2026-12-01T09:00:00Z', '2026-12-01T09:59:00Z'), now)).toBe(0);
    expect(secondsUntilStart(at(null, '2026-12-01T09:59:00Z'), now)).toBeNull();
    expect(secondsUntilStart(at(null, null), now)).toBeNull();
  });
});
