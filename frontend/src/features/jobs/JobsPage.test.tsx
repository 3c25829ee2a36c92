import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { FakeWebSocket } from '../../test/fakeWebSocket';
import { stubFetch } from '../../test/fetchStub';
import { setLanguage } from '../../lib/i18n';
import { BOB, makeJob, page, pipelineJob, POOLS, sessionOf, TOPOLOGY } from '../../test/fixtures';
import { ALICE, renderApp } from '../../test/renderApp';

const JOBS = '/api/v1/tenants/vision/jobs/';

function rowTexts(testId: string): string[][] {
  return within(screen.getByTestId(testId))
    .getAllByRole('row')
    .map((row) => Array.from(row.children, (cell) => cell.textContent));
}

describe('jobs list', () => {
  it('lists the tenant jobs and sends filters as query parameters', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: page([
        makeJob(),
        makeJob({
          id: 12,
          name: 'bert',
          state: 'running',
          priority: 2,
          trial: { sweep: 7, sweep_name: 'lr-search', index: 3 },
        }),
      ]),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
    });
    renderApp('/jobs');

    await screen.findByText('bert');
    expect(
      rowTexts('jobs-table')
        .slice(1)
        .map((r) => r.slice(0, 6)),
    ).toEqual([
      ['#11', 'resnet', 'Training', 'Queued', 'P4', 'a800-train'],
      ['#12', 'bertTrial 3 of sweep lr-search', 'Training', 'Running', 'P2', 'a800-train'],
    ]);
    // A sweep's trial links to its sweep; other jobs have no such tag.
    expect(screen.getByTestId('job-trial-12').getAttribute('href')).toBe('/sweeps/7');
    expect(screen.queryByTestId('job-trial-11')).toBeNull();

    fireEvent.mouseDown(screen.getByRole('combobox', { name: 'State' }));
    fireEvent.click(await screen.findByTitle('Running'));
    await waitFor(() => {
      expect(requests.filter((r) => r.path === JOBS).map((r) => r.query)).toEqual([
        'page_size=50',
        'state=running&page_size=50',
      ]);
    });
  });

  it('moves a job to running when the websocket reports it, and refetches on a gap', async () => {
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: [page([makeJob()]), page([makeJob({ state: 'running' })])],
      'GET /api/v1/pools/': { status: 200, body: POOLS },
    });
    renderApp('/jobs');
    await screen.findByText('resnet');
    const socket = FakeWebSocket.latest();
    expect(socket.url).toBe('ws://localhost:3000/ws/v1/events/');
    expect(screen.getByTestId('connection-indicator').getAttribute('data-state')).toBe(
      'connecting',
    );
    act(() => {
      socket.open();
    });
    expect(socket.sent).toEqual([
      { action: 'subscribe', topic: 'tenant:vision' },
      { action: 'subscribe', topic: 'pools' },
    ]);
    expect(screen.getByTestId('connection-indicator').textContent).toBe('Live');

    act(() => {
      socket.receive({
        type: 'job.updated',
        topic: 'tenant:vision',
        seq: 5,
        data: { id: 11, state: 'running', reason: 'started', message: '' },
      });
    });
    // The cache is patched at once; TanStack notifies on the next tick.
    await waitFor(() => {
      expect(screen.getByTestId('job-state').getAttribute('data-state')).toBe('running');
    });
    await waitFor(() => {
      expect(requests.filter((r) => r.path === JOBS)).toHaveLength(2);
    });

    // seq 6 is missing: the client refetches the list.
    act(() => {
      socket.receive({
        type: 'job.updated',
        topic: 'tenant:vision',
        seq: 7,
        data: { id: 99, state: 'queued' },
      });
    });
    await waitFor(() => {
      expect(requests.filter((r) => r.path === JOBS).length).toBeGreaterThanOrEqual(3);
    });

    act(() => {
      socket.drop();
    });
    expect(screen.getByTestId('connection-indicator').getAttribute('data-state')).toBe(
      'reconnecting',
    );
  });

  it('shows the empty state and the error state', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: page([]),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
    });
    const view = renderApp('/jobs');
    expect(await screen.findByText('No jobs match.')).toBeTruthy();
    view.unmount();

    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: { status: 500, body: { detail: 'boom' } },
      'GET /api/v1/pools/': { status: 200, body: POOLS },
    });
    renderApp('/jobs');
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('The server answered with an error (500).')).toBeTruthy();
  });

  it("walks older pages and back, finds jobs by name and keeps to the user's own", async () => {
    const user = userEvent.setup();
    const older = `http://localhost:3000${JOBS}?cursor=c2&page_size=50`;
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      [`GET ${JOBS}`]: [
        { status: 200, body: { next: older, previous: null, results: [makeJob()] } },
        page([makeJob({ id: 5, name: 'oldest' })]),
        page([makeJob({ id: 12, name: 'bert' })]),
      ],
      'GET /api/v1/pools/': { status: 200, body: POOLS },
    });
    renderApp('/jobs');
    await screen.findByText('resnet');
    expect(screen.getByTestId('jobs-page-page').textContent).toBe('Page 1');
    expect(screen.getByTestId('jobs-page-newer')).toHaveProperty('disabled', true);
    await user.click(screen.getByTestId('jobs-page-older'));
    await screen.findByText('oldest');
    expect(screen.getByTestId('jobs-page-page').textContent).toBe('Page 2');
    expect(screen.getByTestId('jobs-page-older')).toHaveProperty('disabled', true);
    await user.click(screen.getByTestId('jobs-page-newer'));
    await screen.findByText('resnet'); // the first page again, from the cache
    expect(screen.getByTestId('jobs-page-page').textContent).toBe('Page 1');

    await user.type(screen.getByRole('searchbox', { name: 'Search by name' }), ' bert {Enter}');
    await screen.findByText('bert');
    await user.click(screen.getByTestId('jobs-mine'));
    const queries = () => requests.filter((r) => r.path === JOBS).map((r) => r.query);
    await waitFor(() => {
      expect(queries()).toContain('name=bert&owner=bob&page_size=50');
    });
    expect(queries()).toEqual([
      'page_size=50',
      'page_size=50&cursor=c2',
      'name=bert&page_size=50',
      'name=bert&owner=bob&page_size=50',
    ]);
  });
});

describe('submit wizard', () => {
  async function fillToReview(user: ReturnType<typeof userEvent.setup>, project?: string) {
    await user.type(await screen.findByLabelText('Job name'), 'vit-large');
    if (project !== undefined) {
      // The GPU-hours and cost of the job count towards the chosen project.
      fireEvent.mouseDown(screen.getByRole('combobox', { name: 'Project' }));
      fireEvent.click(await screen.findByTitle(project));
    }
    await user.type(screen.getByLabelText('Container image'), 'pytorch:24.05');
    // Split as a shell would: the quoted name is one argument.
    await user.type(screen.getByLabelText('Command'), 'torchrun  train.py --name "my run"');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    fireEvent.mouseDown(screen.getByRole('combobox', { name: 'Resource pool' }));
    fireEvent.click(await screen.findByTitle('a800-train'));
    // The model list follows the chosen pool (a watched field: next render).
    await waitFor(() => {
      fireEvent.mouseDown(screen.getByRole('combobox', { name: 'Accelerator model' }));
      expect(screen.getByTitle('A800 (128 in pool)')).toBeTruthy();
    });
    fireEvent.click(screen.getByTitle('A800 (128 in pool)'));
    const replicas = screen.getByLabelText('Replicas');
    await user.clear(replicas);
    await user.type(replicas, '2');
    expect(screen.getByTestId('total-devices').textContent).toBe(
      'Total: 16 of 128 accelerators in the pool',
    );
    await user.click(screen.getByRole('button', { name: 'Next' }));
  }

  it('validates each step on the client before moving on', async () => {
    const user = userEvent.setup();
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
    });
    renderApp('/jobs/new');
    await user.click(await screen.findByRole('button', { name: 'Next' }));
    expect(await screen.findByText('Enter a job name.')).toBeTruthy();
    expect(screen.getByText('Enter a container image.')).toBeTruthy();
    // An unclosed quote is said on the Command field, not guessed at.
    await user.type(screen.getByLabelText('Command'), 'python train.py --name "my run');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(await screen.findByText('A double quote (") is not closed.')).toBeTruthy();
    expect(screen.getByLabelText('Command')).toBeTruthy(); // still on the first step
  });

  it('says the name rule on the first step and what one node holds on the second', async () => {
    const user = userEvent.setup();
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
    });
    renderApp('/jobs/new');
    await user.type(await screen.findByLabelText('Job name'), 'My Job #1');
    await user.type(screen.getByLabelText('Container image'), 'pytorch:24.05');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    const rule =
      "Lower-case letters, digits and '-', starting and ending with a letter or digit; at most 40 characters.";
    expect(await screen.findByText(rule)).toBeTruthy();
    expect(screen.getByLabelText('Job name')).toBeTruthy(); // still on the first step
    await user.clear(screen.getByLabelText('Job name'));
    await user.type(screen.getByLabelText('Job name'), 'my-job-1');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    fireEvent.mouseDown(await screen.findByRole('combobox', { name: 'Resource pool' }));
    fireEvent.click(await screen.findByTitle('a800-train'));
    await waitFor(() => {
      fireEvent.mouseDown(screen.getByRole('combobox', { name: 'Accelerator model' }));
      expect(screen.getByTitle('A800 (128 in pool)')).toBeTruthy();
    });
    fireEvent.click(screen.getByTitle('A800 (128 in pool)'));
    // 12 per replica is within the API's range but more than an 8-GPU node holds: said so,
    // and the value is kept as typed rather than clamped.
    const perReplica = screen.getByLabelText('Accelerators / replica');
    await user.clear(perReplica);
    await user.type(perReplica, '12');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(
      await screen.findByText(
        'A replica of worker asks for 12 accelerators; the largest A800 node in this pool has 8.',
      ),
    ).toBeTruthy();
    expect((perReplica as HTMLInputElement).value).toBe('12');
    await user.clear(perReplica);
    await user.type(perReplica, '99');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(await screen.findByText('0 to 16 per replica.')).toBeTruthy();
    expect((perReplica as HTMLInputElement).value).toBe('99');
  });

  it('shows a viewer no submit form, and asks before cloning a job', async () => {
    const REFUSED = 'P1 may preempt other work; only tenant admins can submit P0-P2.';
    const user = userEvent.setup();
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf({
        ...BOB,
        memberships: [{ tenant: { id: 1, slug: 'vision', name: 'Vision Lab' }, role: 'viewer' }],
      }),
    });
    const viewer = renderApp('/jobs/new');
    expect(await screen.findByText('Viewers cannot submit work')).toBeTruthy();
    expect(screen.queryByLabelText('Job name')).toBeNull();
    viewer.unmount();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/tenants/vision/jobs/11/': { status: 200, body: makeJob() },
      'GET /api/v1/tenants/vision/jobs/11/events/': { status: 200, body: [] },
      'POST /api/v1/tenants/vision/jobs/11/clone/': {
        status: 400,
        body: { detail: 'Invalid input.', errors: { priority: [REFUSED] } },
      },
    });
    renderApp('/jobs/11');
    await user.click(await screen.findByRole('button', { name: /Clone/ }));
    const confirm = await screen.findByRole('tooltip');
    expect(
      within(confirm).getByText('Submit a copy of this job now, with the same settings?'),
    ).toBeTruthy();
    expect(requests.filter((r) => r.method === 'POST')).toEqual([]);
    // Refused (a member cloning a P1 job): the toast says why, not "Invalid input.".
    await user.click(within(confirm).getByRole('button', { name: /Clone/ }));
    expect(await screen.findByText(REFUSED)).toBeTruthy();
  });

  it('submits the job and shows server field errors on the fields', async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(ALICE),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      [`POST ${JOBS}`]: [
        {
          status: 400,
          body: {
            detail: 'Invalid input.',
            errors: { name: ['A job with this name is running.'] },
          },
        },
        { status: 201, body: makeJob({ id: 42, name: 'vit-large' }) },
      ],
      'GET /api/v1/tenants/vision/jobs/42/': {
        status: 200,
        body: makeJob({ id: 42, name: 'vit-large' }),
      },
      'GET /api/v1/tenants/vision/jobs/42/events/': { status: 200, body: [] },
      'GET /api/v1/tenants/vision/projects/': page([
        {
          id: 3,
          name: 'vision-pretrain',
          description: '',
          created_by: 'alice',
          created_at: '2026-11-30T00:00:00Z',
        },
      ]),
    });
    renderApp('/jobs/new');
    await fillToReview(user, 'vision-pretrain');
    fireEvent.mouseDown(screen.getByRole('combobox', { name: 'Priority' }));
    fireEvent.click(await screen.findByTitle('P1 – high (preempts P4/P5)'));
    await user.type(screen.getByLabelText('Max runtime (s)'), '86400');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(within(await screen.findByTestId('submit-review')).getByText('1 d')).toBeTruthy();
    // The review shows the argv the job gets, argument by argument.
    expect(screen.getByTestId('review-command').textContent).toBe(
      '["torchrun", "train.py", "--name", "my run"]',
    );
    await user.click(await screen.findByRole('button', { name: 'Submit job' }));

    // Back on the first step, the message under the name field.
    expect(await screen.findByText('A job with this name is running.')).toBeTruthy();
    const post = requests.find((r) => r.method === 'POST');
    expect(post?.body).toEqual({
      kind: 'training',
      name: 'vit-large',
      project: 3,
      image: 'pytorch:24.05',
      command: ['torchrun', 'train.py', '--name', 'my run'],
      pool: 1,
      accelerator_model: 'A800',
      priority: 1,
      max_retries: 3,
      max_runtime_s: 86400,
      topology: { mode: 'soft', highest_tier: 'spine' },
      replica_groups: [
        {
          name: 'worker',
          replicas: 2,
          accelerators: 8,
          accelerator_milli: 0,
          cpu_milli: 32000,
          memory_mib: 262144,
          rdma_nics: 0,
        },
      ],
    });
    expect(post?.headers.get('X-CSRFToken')).toBe('tok123');

    await user.click(screen.getByRole('button', { name: 'Next' }));
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await user.click(await screen.findByRole('button', { name: 'Submit job' }));
    expect(await screen.findByText('vit-large (#42)')).toBeTruthy();
  });

  it('starts the job after the chosen training jobs and shows a refusal on that field', async () => {
    const user = userEvent.setup();
    const REFUSED = 'Job #13 (train-base) is failed: a job after it would never start.';
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      [`GET ${JOBS}`]: page([
        makeJob({ id: 14, name: 'broken', state: 'failed' }),
        makeJob({ id: 13, name: 'train-base', state: 'running' }),
        makeJob({ id: 12, name: 'prep-data', state: 'succeeded' }),
      ]),
      [`POST ${JOBS}`]: [
        { status: 400, body: { detail: 'Invalid input.', errors: { after: [REFUSED] } } },
        { status: 201, body: makeJob({ id: 42, name: 'vit-large' }) },
      ],
      'GET /api/v1/tenants/vision/jobs/42/': {
        status: 200,
        body: makeJob({ id: 42, name: 'vit-large' }),
      },
      'GET /api/v1/tenants/vision/jobs/42/events/': { status: 200, body: [] },
    });
    renderApp('/jobs/new');
    await fillToReview(user);
    // The newest training jobs, less those that failed or were cancelled; found by label.
    const field = screen.getByRole('combobox', { name: 'Start after' });
    fireEvent.mouseDown(field);
    expect(await screen.findByTitle('#13 train-base (Running)')).toBeTruthy();
    expect(screen.queryByTitle('#14 broken (Failed)')).toBeNull();
    await user.type(field, 'prep');
    expect(screen.queryByTitle('#13 train-base (Running)')).toBeNull();
    fireEvent.click(await screen.findByTitle('#12 prep-data (Succeeded)'));
    await user.clear(field);
    fireEvent.click(await screen.findByTitle('#13 train-base (Running)'));
    const listed = new URLSearchParams(requests.find((r) => r.path === JOBS)?.query);
    expect([listed.get('kind'), listed.get('page_size')]).toEqual(['training', '100']);

    await user.click(screen.getByRole('button', { name: 'Next' }));
    const review = await screen.findByTestId('submit-review');
    expect(within(review).getByText('#12, #13')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    // Back on the scheduling step, the server's sentence under the field.
    expect(await screen.findByText(REFUSED)).toBeTruthy();
    expect(screen.getByRole('combobox', { name: 'Start after' })).toBeTruthy();
    const posts = () => requests.filter((r) => r.method === 'POST');
    expect((posts()[0]?.body as { after?: number[] }).after).toEqual([12, 13]);

    // None chosen: no `after` in the body at all.
    for (const remove of screen.getAllByLabelText('close')) fireEvent.click(remove);
    await user.click(screen.getByRole('button', { name: 'Next' }));
    const none = within(await screen.findByTestId('submit-review')).getByText('Start after');
    expect(none.closest('tr')?.textContent).toBe('Start after—');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    expect(await screen.findByText('vit-large (#42)')).toBeTruthy();
    expect(posts()).toHaveLength(2);
    expect(posts()[1]?.body).not.toHaveProperty('after');
  });

  it('tells a member that P0-P2 need a tenant admin', async () => {
    const user = userEvent.setup();
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
    });
    renderApp('/jobs/new');
    await fillToReview(user);
    expect(screen.getByText('P0–P2 may preempt P4/P5 work and need a tenant admin.')).toBeTruthy();
    fireEvent.mouseDown(screen.getByRole('combobox', { name: 'Priority' }));
    fireEvent.click(await screen.findByTitle('P0 – critical (preempts P4/P5)'));
    await user.click(screen.getByRole('button', { name: 'Next' }));
    // Once as the warning beside the field, once as the field's validation message.
    await waitFor(() => {
      expect(screen.getAllByText('Only tenant admins can submit P0–P2.')).toHaveLength(2);
    });
    expect(screen.queryByTestId('submit-review')).toBeNull();
  });
});

describe('job detail', () => {
  it('says what the pool can start now when a job waits for GPUs', async () => {
    const waiting = makeJob({
      requested_devices: 256,
      queue_position: 1,
      pending_code: 'reserved',
      pending_message: 'holding 32 nodes while they drain',
    });
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/pools/1/topology/': { status: 200, body: TOPOLOGY },
      'GET /api/v1/tenants/vision/jobs/11/': { status: 200, body: waiting },
      'GET /api/v1/tenants/vision/jobs/11/events/': { status: 200, body: [] },
    });
    renderApp('/jobs/11');
    const pending = await screen.findByTestId('pending-reason');
    expect((await within(pending).findByTestId('pool-now')).textContent).toBe(
      'In this pool now: 8 GPUs free as whole servers in one leaf, 8 in one Scalable Unit, ' +
        '8 in all; 3 free GPUs are stranded on part-used servers.',
    );
  });

  it('says the scheduler’s reason in the reader’s language', async () => {
    await setLanguage('zh');
    const waiting = makeJob({
      queue_position: 2,
      pending_code: 'quota',
      pending_message: "tenant 'vision' has no A800 quota in pool 'a800-train'",
      pending_detail: [
        { key: 'noQuota', args: { tenant: 'vision', model: 'A800', pool: 'a800-train' } },
      ],
    });
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/tenants/vision/jobs/11/': { status: 200, body: waiting },
      'GET /api/v1/tenants/vision/jobs/11/events/': { status: 200, body: [] },
    });
    renderApp('/jobs/11');
    const pending = await screen.findByTestId('pending-reason');
    expect(
      within(pending).getByText('租户 “vision” 在资源池 “a800-train” 中没有 A800 配额'),
    ).toBeTruthy();
    expect(within(pending).queryByText(/has no A800 quota/)).toBeNull();
  });

  it('lists the jobs it starts after and says it waits for them', async () => {
    const waiting = makeJob({
      pending_code: 'after',
      pending_message: 'starts after job(s) 12, 13 succeed',
      pending_detail: [{ key: 'afterJobs', args: { jobs: { items: ['12', '13'] } } }],
      waiting_for_jobs: true,
      after_jobs: [
        { id: 12, name: 'prep-data', state: 'succeeded' },
        { id: 13, name: 'train-base', state: 'running' },
      ],
    });
    const routes = {
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/tenants/vision/jobs/11/': { status: 200, body: waiting },
      'GET /api/v1/tenants/vision/jobs/11/events/': { status: 200, body: [] },
      'GET /api/v1/tenants/vision/jobs/11/pipeline/': {
        status: 200,
        body: {
          jobs: [
            pipelineJob(11, 'llama-sft', 'queued', [12, 13]),
            pipelineJob(12, 'prep-data', 'succeeded', []),
            pipelineJob(13, 'train-base', 'running', [12]),
          ],
          truncated: false,
        },
      },
    };
    stubFetch(routes);
    const view = renderApp('/jobs/11');
    const pending = await screen.findByTestId('pending-reason');
    expect(within(pending).getByText('Waiting for the jobs it starts after')).toBeTruthy();
    expect(within(pending).getByTestId('pending-code').textContent).toBe('After other jobs');
    expect(within(pending).getByText('starts after job(s) 12, 13 succeed')).toBeTruthy();
    const after = screen.getAllByTestId('after-job');
    expect(after.map((e) => within(e).getByRole('link').getAttribute('href'))).toEqual([
      '/jobs/12',
      '/jobs/13',
    ]);
    expect(after.map((e) => within(e).getByRole('link').textContent)).toEqual([
      '#12 prep-data',
      '#13 train-base',
    ]);
    expect(after.map((e) => within(e).getByTestId('job-state').textContent)).toEqual([
      'Succeeded',
      'Running',
    ]);
    // The whole pipeline, drawn: prep-data, then train-base, then this job.
    const boxes = await screen.findAllByTestId('pipeline-job');
    expect(boxes.map((e) => e.getAttribute('data-job-id'))).toEqual(['11', '12', '13']);
    expect(screen.getAllByTestId('pipeline-edge')).toHaveLength(3);
    view.unmount();

    await setLanguage('zh');
    stubFetch(routes);
    renderApp('/jobs/11');
    const zh = await screen.findByTestId('pending-reason');
    expect(within(zh).getByText('等待前序作业成功结束')).toBeTruthy();
    expect(within(zh).getByTestId('pending-code').textContent).toBe('等待前序作业');
    expect(within(zh).getByText('在作业 12、13 成功结束后开始')).toBeTruthy();
    expect(within(screen.getByTestId('after-jobs')).getByText('运行中')).toBeTruthy();
    expect(screen.queryByTestId('next-jobs')).toBeNull(); // nothing starts after it
  });

  it('lists the jobs that start after it', async () => {
    const prep = makeJob({
      state: 'succeeded',
      next_jobs: [
        { id: 14, name: 'train-base', state: 'queued' },
        { id: 15, name: 'eval', state: 'cancelled' },
      ],
    });
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/tenants/vision/jobs/11/': { status: 200, body: prep },
      'GET /api/v1/tenants/vision/jobs/11/events/': { status: 200, body: [] },
      'GET /api/v1/tenants/vision/jobs/11/pipeline/': { status: 500, body: { detail: 'down' } },
    });
    renderApp('/jobs/11');
    const next = await screen.findAllByTestId('next-job');
    expect(next.map((e) => within(e).getByRole('link').getAttribute('href'))).toEqual([
      '/jobs/14',
      '/jobs/15',
    ]);
    expect(next.map((e) => within(e).getByTestId('job-state').textContent)).toEqual([
      'Queued',
      'Cancelled',
    ]);
    expect(within(screen.getByTestId('job-summary')).getByText('Then starts')).toBeTruthy();
    expect(screen.queryByTestId('after-jobs')).toBeNull();
    // The drawing failing to load leaves the rest of the page as it is.
    expect(await within(screen.getByTestId('job-pipeline')).findByRole('button')).toBeTruthy();
  });

  it('shows pending reason, queue position, timeline and replicas; cancels', async () => {
    const user = userEvent.setup();
    const queued = makeJob({
      queue_position: 3,
      pending_code: 'capacity',
      pending_message: 'Waiting for 16 A800 in a800-train',
    });
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/tenants/vision/jobs/11/': [
        { status: 200, body: queued },
        { status: 200, body: makeJob({ state: 'cancelled' }) },
      ],
      'GET /api/v1/tenants/vision/jobs/11/events/': {
        status: 200,
        body: [
          {
            id: 2,
            created_at: '2026-11-30T00:00:02Z',
            from_state: 'submitted',
            to_state: 'queued',
            reason: 'admission',
            message: 'queued in a800-train',
          },
          {
            id: 1,
            created_at: '2026-11-30T00:00:01Z',
            from_state: '',
            to_state: 'submitted',
            reason: 'submitted',
            message: '',
          },
        ],
      },
      'POST /api/v1/tenants/vision/jobs/11/cancel/': {
        status: 200,
        body: makeJob({ state: 'cancelled' }),
      },
    });
    renderApp('/jobs/11');

    const pending = await screen.findByTestId('pending-reason');
    expect(within(pending).getByText('Position 3 in the queue')).toBeTruthy();
    // Never started: no GPU use to show (and no request for it: the stub would fail it).
    expect(screen.queryByTestId('job-usage')).toBeNull();
    expect(within(pending).getByText('Waiting for 16 A800 in a800-train')).toBeTruthy();
    expect(within(pending).getByTestId('pending-code').textContent).toBe('Capacity');
    const timeline = await screen.findByTestId('job-timeline');
    expect(Array.from(timeline.querySelectorAll('strong'), (e) => e.textContent)).toEqual([
      'Submitted',
      'Queued',
    ]);
    expect(screen.getByText('No replicas placed.')).toBeTruthy();

    await user.click(screen.getByRole('button', { name: /Cancel job/ }));
    const confirm = await screen.findByRole('tooltip');
    await user.click(within(confirm).getByRole('button', { name: 'Cancel job' }));
    await waitFor(() => {
      expect(screen.getAllByTestId('job-state')[0]?.getAttribute('data-state')).toBe('cancelled');
    });
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      '/api/v1/tenants/vision/jobs/11/cancel/',
    ]);
  });

  it('lists replicas with their nodes for a running job', async () => {
    stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/tenants/vision/jobs/11/': {
        status: 200,
        body: makeJob({
          state: 'running',
          max_runtime_s: 86400,
          allocations: [
            {
              replica_group: 'worker',
              replica_index: 0,
              node: 'a800-train-000',
              devices: [0, 1, 2, 3],
              shares: [],
              surge: false,
            },
            {
              replica_group: 'worker',
              replica_index: 1,
              node: 'a800-train-001',
              devices: [4, 5, 6, 7],
              shares: [],
              surge: false,
            },
          ],
        }),
      },
      'GET /api/v1/tenants/vision/jobs/11/events/': { status: 200, body: [] },
    });
    renderApp('/jobs/11');
    await screen.findByTestId('allocations-table');
    expect(rowTexts('allocations-table')).toEqual([
      ['Replica', 'Node', 'Devices'],
      ['worker-0', 'a800-train-000', '0, 1, 2, 3'],
      ['worker-1', 'a800-train-001', '4, 5, 6, 7'],
    ]);
    expect(screen.queryByTestId('pending-reason')).toBeNull();
    expect(screen.queryByTestId('after-jobs')).toBeNull(); // it starts after no other job
    const summary = screen.getByTestId('job-summary');
    expect(within(summary).getByText('Runtime limit')).toBeTruthy();
    expect(within(summary).getByText('1 d')).toBeTruthy();
  });

  it("names a rollout's surge room and shows a replica's GPUs over time", async () => {
    const user = userEvent.setup();
    const { requests } = stubFetch({
      'GET /api/v1/auth/session/': sessionOf(BOB),
      'GET /api/v1/pools/': { status: 200, body: POOLS },
      'GET /api/v1/tenants/vision/jobs/11/': {
        status: 200,
        body: makeJob({
          kind: 'inference',
          state: 'running',
          allocations: [
            {
              replica_group: 'server',
              replica_index: 0,
              node: 'a800-train-000',
              devices: [2, 5],
              shares: [],
              surge: false,
            },
            {
              replica_group: 'server',
              replica_index: 1000000,
              node: 'a800-train-001',
              devices: [7],
              shares: [],
              surge: true,
            },
          ],
        }),
      },
      'GET /api/v1/tenants/vision/jobs/11/events/': { status: 200, body: [] },
      'GET /api/v1/telemetry/gpu-history/': {
        status: 200,
        body: {
          node: 'a800-train-000',
          gpu: 2,
          source: 'recent',
          resolution_s: 10,
          kept_s: 3600,
          points: [
            {
              ts: '2026-12-07T10:00:00Z',
              util: 91,
              fb_used_pct: 80,
              power_w: 350,
              temp_c: 70,
              sm_active_pct: 88,
            },
          ],
        },
      },
    });
    renderApp('/jobs/11');
    await screen.findByTestId('allocations-table');
    expect(rowTexts('allocations-table').map((r) => r[0])).toEqual([
      'Replica',
      'server-0',
      'server (surge, until the rolling update ends)',
    ]);
    const [first] = screen.getAllByRole('button', { name: 'GPU history on a800-train-000' });
    if (first === undefined) throw new Error('no GPU history button');
    await user.click(first);
    const card = await screen.findByTestId('job-gpu-history');
    await within(card).findByTestId('gpu-history-chart');
    const query = () =>
      new URLSearchParams(
        requests.filter((r) => r.path === '/api/v1/telemetry/gpu-history/').at(-1)?.query,
      );
    expect([query().get('node'), query().get('gpu')]).toEqual(['a800-train-000', '2']);
    // The picker offers the replica's own GPUs only.
    const picker = within(card).getByRole('radiogroup', { name: 'GPU' });
    expect(
      within(picker)
        .getAllByRole('radio')
        .map((r) => r.closest('label')?.textContent),
    ).toEqual(['GPU 2', 'GPU 5']);
    await user.click(within(picker).getByText('GPU 5'));
    await waitFor(() => {
      expect(query().get('gpu')).toBe('5');
    });
  });
});
