import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { setLanguage } from '../../lib/i18n';
import { stubFetch } from '../../test/fetchStub';
import { ADMIN, BOB, page, sessionOf } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';
import { DEFAULT_POLICY, GOV, makeFlag, policyAnswer } from './fixtures';

const FLAG = makeFlag();

describe('settings: idle GPUs', () => {
  it('shows a tenant admin the last 30 days, the policy and the flags; tightens the policy', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tokens/': page([]),
      [`GET ${GOV}/efficiency/`]: {
        status: 200,
        body: {
          start: '2026-11-03T00:00:00Z',
          end: '2026-12-03T00:00:00Z',
          reserved_gpu_hours: 1200.5,
          used_gpu_hours: 900.25,
          unknown_util_gpu_hours: 0,
          utilization_pct: 75,
          idle_reclaimed_gpu_hours: 48,
          jobs_stopped_idle: 3,
          jobs_expired_in_queue: 1,
        },
      },
      [`GET ${GOV}/policy/`]: policyAnswer({}, false),
      [`PATCH ${GOV}/policy/`]: [
        {
          status: 400,
          body: {
            detail: 'Invalid input.',
            errors: { grace_s: ['Must be at most the platform default (1800).'] },
          },
        },
        policyAnswer({ grace_s: 900 }, true),
      ],
      [`GET ${GOV}/flags/`]: [page([FLAG]), page([{ ...FLAG, id: 4, job: 9, state: 'cleared' }])],
    });
    renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: 'Idle GPUs' }));

    const efficiency = await screen.findByTestId('idle-efficiency');
    expect((await within(efficiency).findByTestId('efficiency-reserved')).textContent).toContain(
      '1,200.5',
    );
    expect(within(efficiency).getByTestId('efficiency-utilization').textContent).toContain('75 %');
    expect(within(efficiency).getByTestId('efficiency-reclaimed').textContent).toContain('48');
    expect(within(efficiency).getByTestId('efficiency-stopped').textContent).toContain('3');

    const summary = await screen.findByTestId('idle-policy');
    expect(within(summary).getByText('Training jobs idle for').nextSibling?.textContent).toBe(
      '2 h',
    );
    expect(within(summary).getByText('Runtime cap').nextSibling?.textContent).toBe('No cap');
    expect(screen.getByTestId('policy-origin').textContent).toBe('Platform default');

    // Active flags first (the server filters by state), then all of them.
    const flags = screen.getByTestId('idle-flags');
    expect(await within(flags).findByText('resnet (#11)')).toBeTruthy();
    expect(within(flags).getByText('Warned')).toBeTruthy();
    const flagQuery = () =>
      new URLSearchParams(requests.filter((r) => r.path === `${GOV}/flags/`).at(-1)?.query);
    expect(flagQuery().getAll('state')).toEqual(['warned', 'extended']);
    await user.click(screen.getByText('All'));
    expect(await within(flags).findByText('Busy again')).toBeTruthy();
    expect(flagQuery().getAll('state')).toEqual([]);

    // Tightening: the server's bound lands on its field, then the saved policy shows.
    await user.click(screen.getByTestId('edit-policy'));
    const dialog = await screen.findByRole('dialog');
    const grace = within(dialog).getByLabelText('Warning before the stop');
    await user.clear(grace);
    await user.type(grace, '3600');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(
      await within(dialog).findByText('Must be at most the platform default (1800).'),
    ).toBeTruthy();
    await user.clear(grace);
    await user.type(grace, '900');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => {
      expect(screen.getByTestId('policy-origin').textContent).toBe('This tenant’s own');
    });
    const patches = requests.filter((r) => r.method === 'PATCH').map((r) => r.body);
    expect(patches).toMatchObject([{ grace_s: 3600 }, { grace_s: 900, training_idle_s: 7200 }]);
    expect(
      within(screen.getByTestId('idle-policy')).getByText('Warning before the stop').nextSibling
        ?.textContent,
    ).toBe('15 min');
  }, 20_000);

  it('shows a member the policy and the flags, without the report or the edit', async () => {
    const user = userEvent.setup();
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/tokens/': page([]),
      [`GET ${GOV}/policy/`]: policyAnswer({ grace_s: 900 }, true),
      [`GET ${GOV}/flags/`]: page([]),
    });
    renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: 'Idle GPUs' }));
    const summary = await screen.findByTestId('idle-policy');
    expect(within(summary).getByText('Warning before the stop').nextSibling?.textContent).toBe(
      '15 min',
    );
    expect(await screen.findByText('No idle flags.')).toBeTruthy();
    expect(screen.queryByTestId('idle-efficiency')).toBeNull();
    expect(screen.queryByTestId('edit-policy')).toBeNull();
  });
});

describe('settings: platform idle policy', () => {
  it('lets a platform admin edit the default, with the server’s bounds and a cleared cap', async () => {
    const user = userEvent.setup();
    const DEFAULT = '/api/v1/governance/default-policy/';
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/tokens/': page([]),
      [`GET ${DEFAULT}`]: { status: 200, body: { ...DEFAULT_POLICY, max_runtime_s: 86400 } },
      [`PUT ${DEFAULT}`]: [
        {
          status: 400,
          body: {
            detail: 'Invalid input.',
            errors: { util_threshold_pct: ['Ensure this value is less than or equal to 90.'] },
          },
        },
        { status: 200, body: { ...DEFAULT_POLICY, util_threshold_pct: 20 } },
      ],
    });
    renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: 'Platform idle policy' }));
    const summary = await screen.findByTestId('default-policy');
    expect(within(summary).getByText('Runtime cap').nextSibling?.textContent).toBe('1 d');
    expect(within(summary).queryByText('Webhook')).toBeNull();

    await user.click(screen.getByTestId('edit-default-policy'));
    const dialog = await screen.findByRole('dialog');
    const threshold = within(dialog).getByLabelText('Idle below');
    await user.clear(threshold);
    await user.type(threshold, '95');
    await user.clear(within(dialog).getByLabelText('Runtime cap'));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(
      await within(dialog).findByText('Ensure this value is less than or equal to 90.'),
    ).toBeTruthy();
    await user.clear(threshold);
    await user.type(threshold, '20');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => {
      expect(
        within(screen.getByTestId('default-policy')).getByText('Idle below').nextSibling
          ?.textContent,
      ).toBe('20 %');
    });
    const puts = requests.filter((r) => r.method === 'PUT').map((r) => r.body);
    expect(puts).toMatchObject([
      { util_threshold_pct: 95, max_runtime_s: null },
      { util_threshold_pct: 20, max_runtime_s: null, grace_s: 1800 },
    ]);
    expect(screen.queryByRole('dialog')).toBeNull();
  }, 20_000);

  it('is not offered to a tenant admin', async () => {
    const user = userEvent.setup();
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tokens/': page([]),
    });
    renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: 'Profile' }));
    expect(screen.getByRole('tab', { name: 'Idle GPUs' })).toBeTruthy();
    expect(screen.queryByRole('tab', { name: 'Platform idle policy' })).toBeNull();
  });
});

// An English unit after a number ("2h", "30 min", "1d 0h"): none may show in the Chinese UI.
const ENGLISH_UNIT = /\d\s*(d|h|m|min|s)\b/;

describe('settings: idle policy durations in Chinese', () => {
  afterEach(async () => {
    await setLanguage('en');
  });

  it('shows a tenant admin the policy and the platform bounds in Chinese units', async () => {
    await setLanguage('zh');
    const user = userEvent.setup();
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/tokens/': page([]),
      [`GET ${GOV}/efficiency/`]: { status: 404, body: { detail: 'Not found.' } },
      [`GET ${GOV}/policy/`]: policyAnswer({ grace_s: 900, max_runtime_s: 5400 }, true),
      [`GET ${GOV}/flags/`]: page([]),
    });
    renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: '空闲 GPU' }));
    const summary = await screen.findByTestId('idle-policy');
    const shown = (label: string) => within(summary).getByText(label).nextSibling?.textContent;
    expect(shown('训练作业空闲多久')).toBe('2小时');
    expect(shown('停止前的警告时间')).toBe('15分钟');
    expect(shown('运行时间上限')).toBe('1小时30分钟');
    expect(summary.textContent).not.toMatch(ENGLISH_UNIT);

    // The platform default beside each field of the edit form.
    await user.click(screen.getByTestId('edit-policy'));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText('平台默认：30分钟（允许的最宽松值）')).toBeTruthy();
    expect(within(dialog).getByText('平台默认：2小时（允许的最宽松值）')).toBeTruthy();
    expect(dialog.textContent).not.toMatch(ENGLISH_UNIT);
  }, 20_000);

  it('shows a platform admin the default policy in Chinese units', async () => {
    await setLanguage('zh');
    const user = userEvent.setup();
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ADMIN),
      'GET /api/v1/tokens/': page([]),
      'GET /api/v1/governance/default-policy/': {
        status: 200,
        body: { ...DEFAULT_POLICY, max_runtime_s: 86400 },
      },
    });
    renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: '平台空闲策略' }));
    const summary = await screen.findByTestId('default-policy');
    expect(within(summary).getByText('运行时间上限').nextSibling?.textContent).toBe('1天');
    expect(within(summary).getByText('每次延长').nextSibling?.textContent).toBe('1小时');
    expect(summary.textContent).not.toMatch(ENGLISH_UNIT);
  });
});
