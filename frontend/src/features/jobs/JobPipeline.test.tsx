import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Job, PipelineJob } from '../../lib/apiTypes';
import { formatDateTime } from '../../lib/format';
import { FakeWebSocket } from '../../test/fakeWebSocket';
import { stubFetch } from '../../test/fetchStub';
import { BOB, makeJob, pipelineJob, POOLS, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

const JOB = '/api/v1/tenants/vision/jobs/11/';
const PIPELINE = `${JOB}pipeline/`;

// prep (10) -> train (11, this page) -> eval (12) and export (13).
const TRAIN = makeJob({
  after_jobs: [{ id: 10, name: 'prep-data', state: 'succeeded' }],
  next_jobs: [
    { id: 12, name: 'eval', state: 'submitted' },
    { id: 13, name: 'export', state: 'submitted' },
  ],
});

function pipeline(trainState: PipelineJob['state'], truncated = false) {
  return {
    status: 200,
    body: {
      jobs: [
        pipelineJob(10, 'prep-data', 'succeeded', [], {
          started_at: '2026-11-29T22:00:00Z',
          finished_at: '2026-11-29T23:00:00Z',
        }),
        pipelineJob(11, 'resnet', trainState, [10]),
        pipelineJob(12, 'eval', 'submitted', [11]),
        pipelineJob(13, 'export', 'submitted', [11]),
      ],
      truncated,
    },
  };
}

function routes(job: Job | Job[], extra: Record<string, unknown> = {}) {
  const jobs = Array.isArray(job) ? job : [job];
  return {
    'GET /api/v1/auth/session/': sessionOf(BOB),
    'GET /api/v1/pools/': { status: 200, body: POOLS },
    [`GET ${JOB}`]: jobs.map((body) => ({ status: 200, body })),
    [`GET ${JOB}events/`]: { status: 200, body: [] },
    ...extra,
  };
}

const boxes = () => screen.getAllByTestId('pipeline-job');

function box(index: number): HTMLElement {
  const found = boxes()[index];
  if (found === undefined) throw new Error(`no box ${index}`);
  return found;
}

describe('job pipeline card', () => {
  it('draws the pipeline with the job highlighted, and opens a job from its box', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch(
      routes(TRAIN, { [`GET ${PIPELINE}`]: pipeline('queued', true) }),
    );
    const { router } = renderApp('/jobs/11');
    const card = await screen.findByTestId('job-pipeline');
    await within(card).findAllByTestId('pipeline-job');
    expect(within(card).getByText('Pipeline')).toBeTruthy();
    expect(boxes().map((b) => b.getAttribute('href'))).toEqual([
      '/jobs/10',
      '/jobs/11',
      '/jobs/12',
      '/jobs/13',
    ]);
    expect(boxes().map((b) => b.textContent)).toEqual([
      'prep-data#10Succeeded',
      'resnet#11Queued',
      'eval#12Submitted',
      'export#13Submitted',
    ]);
    expect(boxes().map((b) => b.getAttribute('aria-current'))).toEqual([null, 'page', null, null]);
    expect(
      within(card)
        .getAllByTestId('pipeline-edge')
        .map((e) => `${e.dataset.from}>${e.dataset.to}`),
    ).toEqual(['10>11', '11>12', '11>13']);
    expect(within(card).getByTestId('pipeline-truncated').textContent).toBe(
      'Showing the 4 nearest jobs of a larger pipeline.',
    );
    expect(requests.filter((r) => r.path === PIPELINE)).toHaveLength(1);

    // Name, state, owner and, for an ended job, when it ended.
    await user.hover(box(0));
    const tooltip = await screen.findByTestId('pipeline-tooltip');
    expect(Array.from(tooltip.children, (line) => line.textContent)).toEqual([
      'prep-data (#10) · Succeeded',
      'Owner: bob',
      `Finished ${formatDateTime('2026-11-29T23:00:00Z', 'en')}`,
    ]);

    await user.click(box(2));
    expect(router.state.location.pathname).toBe('/jobs/12');
  });

  it('draws the pipeline again when the job changes state', async () => {
    const admitted = { ...TRAIN, state: 'admitted' as const };
    const { requests } = stubFetch(
      routes([TRAIN, admitted], {
        [`GET ${PIPELINE}`]: [pipeline('queued'), pipeline('admitted')],
      }),
    );
    renderApp('/jobs/11');
    await screen.findAllByTestId('pipeline-job');
    expect(boxes()[1]?.dataset.state).toBe('queued');
    expect(screen.queryByTestId('pipeline-truncated')).toBeNull();
    const socket = FakeWebSocket.latest();
    act(() => {
      socket.open();
      socket.receive({
        type: 'job.updated',
        topic: 'tenant:vision',
        seq: 1,
        data: { id: 11, state: 'admitted', reason: 'admitted', message: '' },
      });
    });
    await waitFor(() => {
      expect(boxes()[1]?.dataset.state).toBe('admitted');
    });
    expect(requests.filter((r) => r.path === PIPELINE).length).toBeGreaterThanOrEqual(2);
  });

  it('is not shown for a job on its own', async () => {
    const { requests } = stubFetch(routes(makeJob()));
    renderApp('/jobs/11');
    await screen.findByTestId('job-summary');
    expect(screen.queryByTestId('job-pipeline')).toBeNull();
    expect(requests.some((r) => r.path === PIPELINE)).toBe(false);
  });
});

describe('submit next step', () => {
  it('opens the submit form after a training job', async () => {
    const user = userEvent.setup();
    stubFetch(routes(makeJob({ state: 'running' })));
    const { router } = renderApp('/jobs/11');
    await user.click(await screen.findByRole('button', { name: /Submit next step/ }));
    expect(router.state.location.pathname).toBe('/jobs/new');
    expect(router.state.location.search).toBe('?after=11');
    expect((await screen.findByTestId('next-step-of')).textContent).toContain('#11 resnet');
  });

  it('is not offered for a failed or cancelled job, nor for other kinds', async () => {
    for (const job of [
      makeJob({ state: 'failed' }),
      makeJob({ state: 'cancelled' }),
      makeJob({ kind: 'notebook', state: 'running' }),
    ]) {
      stubFetch(routes(job));
      const view = renderApp('/jobs/11');
      await screen.findByTestId('job-summary');
      expect(screen.queryByTestId('submit-next-step')).toBeNull();
      view.unmount();
    }
  });
});
