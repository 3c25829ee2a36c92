import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { stubFetch } from '../../test/fetchStub';
import { BOB, makeJob, page, POOLS, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

const JOBS = '/api/v1/tenants/vision/jobs/';

const GROUPS = [
  {
    name: 'trainer',
    replicas: 2,
    accelerators: 4,
    accelerator_milli: 0,
    cpu_milli: 16000,
    memory_mib: 131072,
    rdma_nics: 0,
  },
];

const PREP = makeJob({
  id: 12,
  name: 'prep-data',
  state: 'succeeded',
  project: 3,
  accelerator_model: 'A800',
  spec: {
    image: 'pytorch:24.05',
    command: ['python', 'prep.py'],
    accelerator_models: ['A800'],
    topology: { mode: 'hard', highest_tier: 'su' },
    replica_groups: GROUPS,
  },
});

function routes(extra: Record<string, unknown>) {
  return {
    'GET /api/v1/auth/session/': sessionOf(BOB),
    'GET /api/v1/pools/': { status: 200, body: POOLS },
    // The newest training jobs, without the one to start after (it is older than those).
    [`GET ${JOBS}`]: page([makeJob({ id: 40, name: 'other', state: 'running' })]),
    'GET /api/v1/tenants/vision/projects/': page([
      {
        id: 3,
        name: 'vision-pretrain',
        description: '',
        created_by: 'bob',
        created_at: '2026-11-30T00:00:00Z',
      },
    ]),
    ...extra,
  };
}

const value = (label: string) => screen.getByLabelText<HTMLInputElement>(label).value;

describe('submit a next step', () => {
  it('fills the form in from the job it starts after, but for name and command', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch(
      routes({
        [`GET ${JOBS}12/`]: { status: 200, body: PREP },
        [`POST ${JOBS}`]: { status: 201, body: makeJob({ id: 42, name: 'train' }) },
        [`GET ${JOBS}42/`]: { status: 200, body: makeJob({ id: 42, name: 'train' }) },
        [`GET ${JOBS}42/events/`]: { status: 200, body: [] },
      }),
    );
    renderApp('/jobs/new?after=12');
    expect((await screen.findByTestId('next-step-of')).textContent).toBe(
      'Next step after #12 prep-data: it starts when that job succeeds. Pool, image and resources are copied from it; give this step a name and a command.',
    );
    expect([value('Job name'), value('Container image'), value('Command')]).toEqual([
      '',
      'pytorch:24.05',
      '',
    ]);
    await user.type(screen.getByLabelText('Job name'), 'train');
    await user.type(screen.getByLabelText('Command'), 'torchrun train.py');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect([value('Group name'), value('Replicas')]).toEqual(['trainer', '2']);
    await user.click(screen.getByRole('button', { name: 'Next' }));
    // The job is offered (and chosen) though it is not among the newest.
    const after = screen.getByRole('combobox', { name: 'Start after' }).closest('.ant-select');
    expect(after?.textContent).toContain('#12 prep-data (Succeeded)');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    const review = await screen.findByTestId('submit-review');
    const row = (label: string) => within(review).getByText(label).closest('tr')?.textContent;
    expect(row('Resource pool')).toBe('Resource poola800-train');
    expect(row('Replica groups')).toBe('Replica groupstrainer: 2 × 4');
    expect(row('Start after')).toBe('Start after#12');

    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    expect(await screen.findByText('train (#42)')).toBeTruthy();
    expect(requests.find((r) => r.method === 'POST')?.body).toEqual({
      kind: 'training',
      name: 'train',
      project: 3,
      image: 'pytorch:24.05',
      command: ['torchrun', 'train.py'],
      pool: 1,
      accelerator_model: 'A800',
      priority: 4,
      max_retries: 3,
      after: [12],
      topology: { mode: 'hard', highest_tier: 'su' },
      replica_groups: GROUPS, // as the job it follows
    });
  });

  it('leaves the form as usual for a job that is not the tenant’s, or cannot be followed', async () => {
    for (const [id, answer] of [
      [999, { status: 404, body: { detail: 'No Job matches the given query.' } }],
      [12, { status: 200, body: { ...PREP, state: 'failed' } }],
    ] as const) {
      stubFetch(routes({ [`GET ${JOBS}${id}/`]: answer }));
      const view = renderApp(`/jobs/new?after=${id}`);
      expect(await screen.findByLabelText('Job name')).toBeTruthy();
      expect(screen.queryByTestId('next-step-of')).toBeNull();
      expect([value('Container image'), value('Group name')]).toEqual(['', 'worker']);
      // On a later step, so hidden: nothing chosen to start after.
      const after = screen.getByRole('combobox', { name: 'Start after', hidden: true });
      expect(after.closest('.ant-select')?.textContent).toBe('No other jobs');
      view.unmount();
    }
  });
});
