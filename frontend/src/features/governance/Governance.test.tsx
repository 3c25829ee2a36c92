import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { setLanguage } from '../../lib/i18n';
import { stubFetch } from '../../test/fetchStub';
import { BOB, makeJob, page, POOLS, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';
import { GOV, makeFlag, policyAnswer } from './fixtures';

const JOB = '/api/v1/tenants/vision/jobs/11/';
const notice = (id: number, read: boolean, job: number | null = 11) => ({
  id,
  kind: 'idle_warning',
  job,
  title: `Idle GPUs: resnet #${id}`,
  body: 'Its 8 GPUs have been idle for 2h; it will be stopped at 14:30.',
  detail: null,
  read_at: read ? '2026-12-03T10:00:00Z' : null,
  created_at: `2026-12-03T09:0${id}:00Z`,
});
/** The job page's own requests, for a job that started (or not). */
function jobPage(started: boolean) {
  const job = started
    ? makeJob({ state: 'running', started_at: '2026-12-03T07:00:00Z' })
    : makeJob();
  return {
    [`GET ${JOB}`]: { status: 200, body: job },
    [`GET ${JOB}events/`]: { status: 200, body: [] },
    'GET /api/v1/pools/': { status: 200, body: POOLS },
    'GET /api/v1/tenants/vision/runs/': page([]),
    [`GET ${JOB}logs/`]: {
      status: 200,
      body: { source: 'simulated', lines: [], truncated: false },
    },
    [`GET ${JOB}cost/`]: {
      status: 200,
      body: { device_hours: 1, cost: '2.50', price_per_device_hour: '2.5000' },
    },
    'GET /api/v1/telemetry/jobs/11/usage/': {
      status: 200,
      body: {
        job: 11,
        gpu_hours: 1,
        mean_util: 2,
        mean_power_w: 60,
        energy_kwh: 0.1,
        fb_used_peak_mib: 0,
      },
    },
    'GET /api/v1/telemetry/history/': {
      status: 200,
      body: { series: 'job:11', resolution_s: 10, points: [] },
    },
    [`GET ${GOV}/policy/`]: policyAnswer({}, false),
  };
}

describe('governance in the console', () => {
  it('counts unread notices in the header, opens one at its job and marks all read', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/overview/': { status: 500, body: { detail: 'not under test' } },
      [`GET ${GOV}/notifications/unread-count/`]: [
        { status: 200, body: { marked: 0, unread: 2 } },
        { status: 200, body: { marked: 0, unread: 1 } },
        { status: 200, body: { marked: 0, unread: 0 } },
      ],
      [`GET ${GOV}/notifications/`]: page([
        notice(3, false),
        notice(2, false, null),
        notice(1, true),
      ]),
      [`POST ${GOV}/notifications/3/read/`]: { status: 200, body: notice(3, true) },
      [`POST ${GOV}/notifications/read-all/`]: { status: 200, body: { marked: 1, unread: 0 } },
      [`GET ${GOV}/flags/`]: page([]),
      ...jobPage(false),
    });
    renderApp('/overview');
    const bell = await screen.findByRole('button', { name: 'Notices, 2 unread' });
    await user.click(bell);
    const inbox = await screen.findByTestId('notice-inbox');
    const [first, ...rest] = await within(inbox).findAllByTestId('notice');
    if (first === undefined) throw new Error('the inbox lists no notice');
    expect([first, ...rest].map((n) => n.dataset.unread)).toEqual(['true', 'true', 'false']);
    expect(within(first).getByText('Idle GPUs: resnet #3')).toBeTruthy();
    expect(
      new URLSearchParams(requests.find((r) => r.path === `${GOV}/notifications/`)?.query).get(
        'page_size',
      ),
    ).toBe('10');

    // Opening a notice marks it read and goes to its job.
    await user.click(first);
    expect(await screen.findByTestId('job-summary')).toBeTruthy();
    expect(
      requests.some((r) => r.method === 'POST' && r.path === `${GOV}/notifications/3/read/`),
    ).toBe(true);
    await screen.findByRole('button', { name: 'Notices, 1 unread' });

    await user.click(screen.getByTestId('notice-bell'));
    await user.click(await screen.findByTestId('notices-read-all'));
    await screen.findByRole('button', { name: 'Notices, 0 unread' });
    expect(requests.filter((r) => r.path === `${GOV}/notifications/read-all/`)).toHaveLength(1);
  });

  it('says a notice in the reader’s language from its notes, an older one as stored', async () => {
    const user = userEvent.setup();
    await setLanguage('zh');
    const said = {
      ...notice(2, false),
      kind: 'runtime_limit',
      title: 'resnet: stopped at its runtime limit',
      body: 'Job resnet (#11) was stopped: it held its accelerators 2 h 00 min, its limit is 2 h 00 min.',
      detail: {
        title: { key: 'noticeRuntimeLimit', args: { name: 'resnet' } },
        body: [
          {
            key: 'noticeRuntimeLimitBody',
            args: { name: 'resnet', job: 11, held: { seconds: 7200 }, limit: { seconds: 7200 } },
          },
          {
            key: 'noticeCheckpoint',
            args: {
              checkpoint: {
                key: 'checkpointNotAsked',
                args: { where: { key: 'checkpointNone', args: {} } },
              },
            },
          },
        ],
      },
    };
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/overview/': { status: 500, body: { detail: 'not under test' } },
      [`GET ${GOV}/notifications/unread-count/`]: { status: 200, body: { marked: 0, unread: 2 } },
      [`GET ${GOV}/notifications/`]: page([said, notice(1, false)]),
    });
    renderApp('/overview');
    await user.click(await screen.findByTestId('notice-bell'));
    const [first, second] = await within(await screen.findByTestId('notice-inbox')).findAllByTestId(
      'notice',
    );
    if (first === undefined || second === undefined) throw new Error('the inbox lists no notice');
    expect(within(first).getByText('resnet：已在运行时长上限处停止')).toBeTruthy();
    expect(within(first).getByTestId('notice-body').textContent).toBe(
      '作业 resnet（#11）已停止：已占用加速卡 2小时，上限为 2小时。' +
        '检查点：未请求检查点；没有登记完整的检查点。',
    );
    expect(within(second).getByText('Idle GPUs: resnet #1')).toBeTruthy();
  });

  it('warns on the job page and takes the answers: keep running, then exempt', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      ...jobPage(true),
      [`GET ${GOV}/flags/`]: page([makeFlag({ extensions_used: 1 })]),
      [`POST ${GOV}/flags/5/keep-running/`]: {
        status: 200,
        body: makeFlag({ state: 'extended', extensions_used: 2, stop_at: '2026-12-03T11:30:00Z' }),
      },
      [`POST ${GOV}/flags/5/exempt/`]: [
        { status: 400, body: { detail: 'Invalid input.', errors: { reason: ['Too vague.'] } } },
        {
          status: 200,
          body: makeFlag({
            state: 'exempt',
            exempt_reason: 'waiting for data',
            exempted_by: 'bob',
          }),
        },
      ],
    });
    renderApp('/jobs/11');
    const alert = await screen.findByTestId('idle-flag');
    expect(alert.textContent).toContain('this job will be stopped at 12/03/2026');
    // The threshold comes from the tenant's policy, read once a warning shows.
    await waitFor(() => {
      expect(alert.textContent).toContain('under 10% utilization');
    });
    expect(alert.textContent).toContain('peak 3.5%');
    expect(
      new URLSearchParams(requests.find((r) => r.path === `${GOV}/flags/`)?.query).get('job'),
    ).toBe('11');

    // One extension of the two the policy allows is used: one left.
    await user.click(
      await within(alert).findByRole('button', { name: 'Keep running 1 h more (1 left)' }),
    );
    await waitFor(() => {
      expect(within(screen.getByTestId('idle-flag')).getByTestId('keep-running')).toHaveProperty(
        'disabled',
        true,
      );
    });
    expect(screen.getByTestId('idle-flag').textContent).toContain('(0 left)');

    // Exempt: the reason is required, and the server's field error lands on the field.
    await user.click(
      within(screen.getByTestId('idle-flag')).getByRole('button', { name: 'Exempt' }),
    );
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText('Exempt this job from idle stops')).toBeTruthy();
    await user.click(within(dialog).getByRole('button', { name: 'Exempt' }));
    expect(await within(dialog).findByText('Give a reason of at least 3 characters.')).toBeTruthy();
    await user.type(within(dialog).getByLabelText('Reason'), 'data');
    await user.click(within(dialog).getByRole('button', { name: 'Exempt' }));
    expect(await within(dialog).findByText('Too vague.')).toBeTruthy();
    await user.clear(within(dialog).getByLabelText('Reason'));
    await user.type(within(dialog).getByLabelText('Reason'), 'waiting for data');
    await user.click(within(dialog).getByRole('button', { name: 'Exempt' }));
    await waitFor(() => {
      expect(screen.getByTestId('idle-flag').textContent).toContain('Exempt from idle stops');
    });
    expect(screen.getByTestId('idle-flag').textContent).toContain('waiting for data (by bob)');
    const exempts = requests.filter((r) => r.path === `${GOV}/flags/5/exempt/`);
    expect(exempts.map((r) => r.body)).toEqual([
      { reason: 'data' },
      { reason: 'waiting for data' },
    ]);
  }, 20_000);

  it('lets the owner exempt a job before any warning, with a reason', async () => {
    const user = userEvent.setup();
    const exempt = makeFlag({
      state: 'exempt',
      stop_at: null,
      exempt_reason: 'debugging a hang',
      exempted_by: 'bob',
    });
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      ...jobPage(true),
      [`GET ${GOV}/flags/`]: page([]),
      [`POST ${GOV}/flags/exempt-job/`]: { status: 200, body: exempt },
    });
    renderApp('/jobs/11');
    await user.click(await screen.findByRole('button', { name: 'Exempt from idle stops' }));
    const dialog = await screen.findByRole('dialog');
    await user.type(within(dialog).getByLabelText('Reason'), 'debugging a hang');
    await user.click(within(dialog).getByRole('button', { name: 'Exempt' }));
    await waitFor(() => {
      expect(screen.getByTestId('idle-flag').textContent).toContain('debugging a hang (by bob)');
    });
    expect(screen.queryByTestId('exempt-job')).toBeNull();
    expect(requests.find((r) => r.path === `${GOV}/flags/exempt-job/`)?.body).toEqual({
      job: 11,
      reason: 'debugging a hang',
    });
  });

  it('offers no exemption to another member, nor for a job that ended', async () => {
    const job = makeJob({ state: 'running', started_at: '2026-12-03T07:00:00Z', owner: 'carol' });
    // The job page has asked for the job's flag and had its answer: the button would show now.
    const settled = async (requests: { path: string }[]) => {
      await screen.findByRole('heading', { name: /resnet|#11/ });
      await waitFor(() => {
        expect(requests.some((r) => r.path === `${GOV}/flags/`)).toBe(true);
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
    };
    const first = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      ...jobPage(true),
      [`GET ${JOB}`]: { status: 200, body: job },
      [`GET ${GOV}/flags/`]: page([]),
    });
    const { unmount } = renderApp('/jobs/11');
    await settled(first.requests);
    expect(screen.queryByTestId('exempt-job')).toBeNull();
    unmount();
    const second = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      ...jobPage(true),
      [`GET ${JOB}`]: { status: 200, body: { ...job, owner: 'bob', state: 'succeeded' } },
      [`GET ${GOV}/flags/`]: page([]),
    });
    renderApp('/jobs/11');
    await settled(second.requests);
    expect(screen.queryByTestId('exempt-job')).toBeNull();
  });

  it('shows a viewer the warning without the answers', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf({
        ...BOB,
        memberships: [{ tenant: { id: 1, slug: 'vision', name: 'Vision Lab' }, role: 'viewer' }],
      }),
      ...jobPage(true),
      [`GET ${GOV}/flags/`]: page([makeFlag({ extensions_used: 1 })]),
    });
    renderApp('/jobs/11');
    const alert = await screen.findByTestId('idle-flag');
    expect(alert.textContent).toContain('this job will be stopped');
    expect(within(alert).queryByRole('button')).toBeNull();
  });
});
