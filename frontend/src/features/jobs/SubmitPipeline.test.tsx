import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Pool } from '../../lib/apiTypes';
import { setLanguage } from '../../lib/i18n';
import { pageRequests, stubFetch } from '../../test/fetchStub';
import { BOB, makeJob, page, POOLS, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';

const PIPELINE = '/api/v1/tenants/vision/jobs/pipeline/';

// Two clusters with a pool named "train" each.
const PIPELINE_POOLS: Pool[] = [
  ...POOLS,
  { id: 7, name: 'train', cluster: 'bj', description: '', capacity: [] },
  { id: 8, name: 'train', cluster: 'sh', description: '', capacity: [] },
];

const FILE = `# The README's pipeline, with a step in another pool and one after an existing job.
pool: a800-train
image: registry.example.com/ml/pytorch:2.5-cuda12
replica_groups: [{name: worker, replicas: 2, accelerators: 8}]
pipeline:
  - {name: prep, command: [python, prep.py, --seed, 007], after: [12]}
  - name: train
    pool: sh/train
    command: [torchrun, train.py]
    env: {USE_FP8: no}
    after: [prep]
  - {name: eval, command: [python, eval.py], accelerator_model: A800, after: [train, prep]}
`;

const IMAGE = 'registry.example.com/ml/pytorch:2.5-cuda12';
const GROUPS = [{ name: 'worker', replicas: 2, accelerators: 8 }];

const BODY = {
  steps: [
    {
      pool: 1,
      image: IMAGE,
      replica_groups: GROUPS,
      name: 'prep',
      command: ['python', 'prep.py', '--seed', '007'],
      after: [12],
      kind: 'training',
    },
    {
      pool: 8,
      image: IMAGE,
      replica_groups: GROUPS,
      name: 'train',
      command: ['torchrun', 'train.py'],
      env: { USE_FP8: 'no' },
      after: ['prep'],
      kind: 'training',
    },
    {
      pool: 1,
      image: IMAGE,
      replica_groups: GROUPS,
      name: 'eval',
      command: ['python', 'eval.py'],
      accelerator_model: 'A800',
      after: ['train', 'prep'],
      kind: 'training',
    },
  ],
};

function routes(extra: Record<string, unknown> = {}) {
  return {
    'GET /api/v1/auth/session/': sessionOf(BOB),
    'GET /api/v1/pools/': { status: 200, body: PIPELINE_POOLS },
    ...extra,
  };
}

async function paste(text: string) {
  const user = userEvent.setup();
  const field = await screen.findByLabelText('Pipeline file (YAML or JSON)');
  await user.click(field);
  await user.paste(text);
  return user;
}

function tableRows(): string[][] {
  return within(screen.getByTestId('pipeline-steps'))
    .getAllByRole('row')
    .slice(1)
    .map((row) => Array.from(row.children, (cell) => cell.textContent));
}

const submitButton = () => screen.getByRole('button', { name: 'Submit pipeline' });

describe('submit a pipeline', () => {
  it('previews a pasted file, posts its steps in one request and opens the first job', async () => {
    const queued = [41, 42, 43].map((id, i) =>
      makeJob({ id, name: ['prep', 'train', 'eval'][i] ?? '' }),
    );
    const { requests } = stubFetch(
      routes({
        [`POST ${PIPELINE}`]: { status: 201, body: { jobs: queued } },
        'GET /api/v1/tenants/vision/jobs/41/events/': { status: 200, body: [] },
      }),
    );
    const { router } = renderApp('/jobs/new-pipeline');
    expect(await screen.findByTestId('pipeline-preview-empty')).toBeTruthy();
    expect(submitButton()).toHaveProperty('disabled', true);

    const user = await paste(FILE);
    // The steps drawn, with the existing job they start after, and listed.
    const graph = await screen.findByTestId('pipeline-preview-graph');
    expect(
      within(graph)
        .getAllByTestId('pipeline-step')
        .map((box) => box.textContent),
    ).toEqual([
      'prepStep 1 · a800-train · 16',
      'trainStep 2 · sh/train · 16',
      'evalStep 3 · a800-train · 16 × A800',
    ]);
    expect(within(graph).getByTestId('pipeline-existing-job').textContent).toBe('#12Existing job');
    // Node ids: the steps' indexes, then the existing job (3).
    expect(
      within(graph)
        .getAllByTestId('pipeline-edge')
        .map((e) => `${e.dataset.from}>${e.dataset.to}`),
    ).toEqual(['3>0', '0>1', '1>2', '0>2']);
    expect(tableRows()).toEqual([
      ['1', 'prep', 'a800-train', '16', '#12'],
      ['2', 'train', 'sh/train', '16', 'prep'],
      ['3', 'eval', 'a800-train', '16 × A800', 'train, prep'],
    ]);

    await user.click(submitButton());
    expect(await screen.findByText('Queued the pipeline’s 3 steps.')).toBeTruthy();
    await waitFor(() => {
      expect(router.state.location.pathname).toBe('/jobs/41');
    });
    const posts = requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => r.path)).toEqual([PIPELINE]);
    expect(posts[0]?.body).toEqual(BODY);
    expect(posts[0]?.headers.get('X-CSRFToken')).toBe('tok123');
    // The queued job is shown from the answer, not fetched again.
    expect(await screen.findByText('prep (#41)')).toBeTruthy();
  });

  it("shows a refusal's errors by the step's name, and the request's at the top", async () => {
    const { requests } = stubFetch(
      routes({
        [`POST ${PIPELINE}`]: {
          status: 400,
          body: {
            detail: 'Invalid input.',
            errors: {
              steps: {
                '1': {
                  image: ['This field may not be blank.'],
                  replica_groups: { '0': { accelerators: ['Ensure this value is at most 16.'] } },
                },
                '2': { after: ["'x' is not an earlier step of this pipeline."] },
              },
            },
          },
        },
      }),
    );
    const { router } = renderApp('/jobs/new-pipeline');
    const user = await paste(FILE);
    await screen.findByTestId('pipeline-preview-graph');
    await user.click(submitButton());

    const top = await screen.findByTestId('pipeline-submit-error');
    expect(top.textContent).toContain('The pipeline was not submitted: no step of it was queued.');
    expect(top.textContent).toContain("Each step's errors are shown with it below.");
    expect(
      Array.from(screen.getByTestId('step-errors-train').children, (li) => li.textContent),
    ).toEqual([
      'image: This field may not be blank.',
      'replica_groups[0].accelerators: Ensure this value is at most 16.',
    ]);
    expect(screen.getByTestId('step-errors-eval').textContent).toBe(
      "after: 'x' is not an earlier step of this pipeline.",
    );
    expect(screen.queryByTestId('step-errors-prep')).toBeNull();
    expect(
      screen
        .getAllByTestId('pipeline-step')
        .map((box) => [box.dataset.step, box.dataset.refused ?? '']),
    ).toEqual([
      ['0', ''],
      ['1', 'true'],
      ['2', 'true'],
    ]);
    expect(router.state.location.pathname).toBe('/jobs/new-pipeline');
    expect(requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it("says a request's own errors at the top, and forgets them once the file changes", async () => {
    stubFetch(
      routes({
        [`POST ${PIPELINE}`]: {
          status: 400,
          body: {
            detail: 'Invalid input.',
            errors: { steps: ['A pipeline has at most 50 steps.'] },
          },
        },
      }),
    );
    renderApp('/jobs/new-pipeline');
    const user = await paste(FILE);
    await screen.findByTestId('pipeline-preview-graph');
    await user.click(submitButton());
    expect((await screen.findByTestId('pipeline-submit-error')).textContent).toBe(
      'The pipeline was not submitted: no step of it was queued.A pipeline has at most 50 steps.',
    );
    await user.type(screen.getByLabelText('Pipeline file (YAML or JSON)'), '#');
    await waitFor(() => {
      expect(screen.queryByTestId('pipeline-submit-error')).toBeNull();
    });
  });

  it('lists what is wrong with the file and sends nothing', async () => {
    const { requests } = stubFetch(routes());
    renderApp('/jobs/new-pipeline');
    await paste(
      FILE.replace('pool: sh/train', 'pool: train').replace(
        'after: [train, prep]',
        'after: [test]',
      ),
    );
    const problems = await screen.findByTestId('pipeline-problems');
    expect(Array.from(problems.children, (li) => li.textContent)).toEqual([
      "Step 2 'train': pool name 'train' is in clusters bj, sh: write cluster/pool (e.g. bj/train) or the pool id.",
      "Step 3 'eval': starts after 'test', which is not an earlier step of the pipeline.",
    ]);
    expect(screen.queryByTestId('pipeline-preview-graph')).toBeNull();
    expect(submitButton()).toHaveProperty('disabled', true);
    fireEvent.click(submitButton());
    expect(pageRequests(requests).map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/auth/session/',
      'GET /api/v1/pools/',
    ]);
  });

  it('says so in Chinese, and reads an uploaded JSON file', async () => {
    stubFetch(routes());
    await setLanguage('zh');
    const user = userEvent.setup();
    renderApp('/jobs/new-pipeline');
    // The upload's input is made anew after each file: looked up each time.
    const input = () =>
      waitFor(() => {
        const found = document.querySelector<HTMLInputElement>('input[type="file"]');
        if (found === null) throw new Error('no file input');
        return found;
      });
    const json = JSON.stringify({
      image: 'x',
      pool: 'h100',
      pipeline: [{ name: 'a' }],
    });
    await user.upload(await input(), new File([json], 'steps.json', { type: 'application/json' }));
    expect((await screen.findByTestId('pipeline-file-name')).textContent).toBe('读取自 steps.json');
    expect(screen.getByLabelText<HTMLTextAreaElement>('流水线文件（YAML 或 JSON）').value).toBe(
      json,
    );
    expect((await screen.findByTestId('pipeline-problems')).textContent).toBe(
      '默认值：没有名为 “h100” 的资源池。现有资源池：a800-train, ascend-infer, bj/train, sh/train。',
    );

    // Not UTF-8: said, and the text is left as it was.
    await user.upload(await input(), new File([new Uint8Array([0x70, 0xff, 0x3a])], 'bad.yaml'));
    expect((await screen.findByTestId('pipeline-upload-error')).textContent).toBe(
      'bad.yaml 不是 UTF-8 文本：请另存为 UTF-8。',
    );
    expect(screen.getByTestId('pipeline-file-name').textContent).toBe('读取自 steps.json');
  });

  it('offers the pipeline page to members, not to viewers', async () => {
    stubFetch(routes({ 'GET /api/v1/tenants/vision/jobs/': page([makeJob()]) }));
    const member = renderApp('/jobs');
    await screen.findByText('resnet');
    expect(screen.getByRole('button', { name: /Submit a pipeline/ })).toBeTruthy();
    expect(screen.getByRole('button', { name: /Submit training job/ })).toBeTruthy();
    await userEvent.setup().click(screen.getByRole('button', { name: /Submit a pipeline/ }));
    await waitFor(() => {
      expect(member.router.state.location.pathname).toBe('/jobs/new-pipeline');
    });
    expect(await screen.findByRole('heading', { name: 'Submit a pipeline' })).toBeTruthy();
    member.unmount();

    const viewer = {
      ...BOB,
      memberships: [
        { tenant: { id: 1, slug: 'vision', name: 'Vision Lab' }, role: 'viewer' as const },
      ],
    };
    stubFetch(
      routes({
        'GET /api/v1/auth/session/': sessionOf(viewer),
        'GET /api/v1/tenants/vision/jobs/': page([makeJob()]),
      }),
    );
    const list = renderApp('/jobs');
    await screen.findByText('resnet');
    expect(screen.queryByRole('button', { name: /Submit a pipeline/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /Submit training job/ })).toBeNull();
    list.unmount();
    renderApp('/jobs/new-pipeline');
    expect(await screen.findByText('Viewers cannot submit work')).toBeTruthy();
    expect(screen.queryByLabelText('Pipeline file (YAML or JSON)')).toBeNull();
  });
});
