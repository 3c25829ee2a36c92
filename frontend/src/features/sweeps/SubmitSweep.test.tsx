import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Session } from '../../lib/apiTypes';
import { setLanguage } from '../../lib/i18n';
import { pageRequests, stubFetch } from '../../test/fetchStub';
import { BOB, page, POOLS, sessionOf } from '../../test/fixtures';
import { renderApp } from '../../test/renderApp';
import { makeSweep, makeSweepDetail, SWEEPS } from './fixtures';

const FILE = `# The README's sweep.
pool: a800-train
image: registry.example.com/ml/pytorch:2.5-cuda12
replica_groups: [{name: worker, replicas: 1, accelerators: 8}]
command: [python, train.py]
args: [--lr, "{{lr}}", --opt, "{{opt}}", --wd, 1e-2]
sweep:
  name: lr-search
  method: random
  trials: 12
  seed: 7
  parallel: 4
  metric: loss
  goal: min
  parameters:
    lr: {log_uniform: [1e-5, 1e-3]}
    opt: [adam, lion]
`;

const BODY = {
  name: 'lr-search',
  method: 'random',
  trials: 12,
  seed: 7,
  parallel: 4,
  metric: 'loss',
  goal: 'min',
  parameters: { lr: { log_uniform: [0.00001, 0.001] }, opt: ['adam', 'lion'] },
  template: {
    pool: 1,
    image: 'registry.example.com/ml/pytorch:2.5-cuda12',
    replica_groups: [{ name: 'worker', replicas: 1, accelerators: 8 }],
    command: ['python', 'train.py'],
    args: ['--lr', '{{lr}}', '--opt', '{{opt}}', '--wd', '1e-2'],
  },
};

function routes(extra: Record<string, unknown> = {}) {
  return {
    'GET /api/v1/auth/session/': sessionOf(BOB),
    'GET /api/v1/pools/': { status: 200, body: POOLS },
    'GET /api/v1/tenants/vision/projects/': page([
      { id: 3, name: 'vision-pretrain', description: '', created_by: 'bob', created_at: NOW },
      { id: 4, name: 'vision-eval', description: '', created_by: 'bob', created_at: NOW },
    ]),
    ...extra,
  };
}

const NOW = '2026-12-01T00:00:00Z';

/** The project picker's shown value (its placeholder for none). */
function pickedProject(): string {
  const picker = screen.getByTestId('sweep-project');
  return picker.querySelector('.ant-select-content')?.textContent ?? '';
}

async function paste(text: string, label = 'Sweep file (YAML or JSON)') {
  const user = userEvent.setup();
  const field = await screen.findByLabelText(label);
  await user.click(field);
  await user.paste(text);
  return user;
}

function rowTexts(testId: string): string[][] {
  return within(screen.getByTestId(testId))
    .getAllByRole('row')
    .slice(1)
    .map((row) => Array.from(row.children, (cell) => cell.textContent));
}

const submitButton = () => screen.getByRole('button', { name: 'Submit sweep' });

describe('submit a sweep', () => {
  it('previews a pasted file, posts it in one request and opens the sweep', async () => {
    const { requests } = stubFetch(
      routes({
        [`POST ${SWEEPS}`]: { status: 201, body: makeSweep({ id: 9 }) },
        [`GET ${SWEEPS}9/`]: { status: 200, body: makeSweepDetail({ id: 9 }) },
      }),
    );
    const { router } = renderApp('/sweeps/new');
    expect(await screen.findByTestId('sweep-preview-empty')).toBeTruthy();
    expect(submitButton()).toHaveProperty('disabled', true);

    const user = await paste(FILE);
    expect((await screen.findByTestId('sweep-trial-count')).textContent).toBe(
      '12 trials · drawn at random',
    );
    const overview = screen.getByTestId('sweep-overview');
    expect(within(overview).getByTestId('sweep-metric').textContent).toBe(
      'loss, lower is better · each trial by its newest value',
    );
    expect(within(overview).getByText('up to 4 trials')).toBeTruthy();
    expect(screen.getByTestId('sweep-early-stop').textContent).toBe('Off');
    expect(rowTexts('sweep-parameters')).toEqual([
      ['lr', 'Log-uniform', '1e-5 to 0.001'],
      ['opt', 'Values', 'adam, lion'],
    ]);
    const template = screen.getByTestId('sweep-template-summary');
    expect(within(template).getByText('a800-train')).toBeTruthy();
    expect(within(template).getByText('8')).toBeTruthy();
    expect(screen.getByTestId('template-command').textContent).toBe('python train.py');
    expect(screen.getByTestId('template-args').textContent).toBe(
      '--lr {{lr}} --opt {{opt}} --wd 1e-2',
    );

    await user.click(submitButton());
    expect(await screen.findByText('Submitted sweep lr-search.')).toBeTruthy();
    await waitFor(() => {
      expect(router.state.location.pathname).toBe('/sweeps/9');
    });
    const posts = requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => r.path)).toEqual([SWEEPS]);
    expect(posts[0]?.body).toEqual(BODY);
    expect(posts[0]?.headers.get('X-CSRFToken')).toBe('tok123');
  });

  it("says a trial's size is its own when a parameter sets it", async () => {
    stubFetch(routes());
    renderApp('/sweeps/new');
    await paste(
      FILE.replace('accelerators: 8}', 'accelerators: "{{gpus}}"}').replace(
        '    opt: [adam, lion]\n',
        '    opt: [adam, lion]\n    gpus: [4, 8]\n',
      ),
    );
    const template = await screen.findByTestId('sweep-template-summary');
    expect(within(template).getByText('set by each trial (gpus)')).toBeTruthy();
  });

  it('counts a grid as every combination', async () => {
    stubFetch(routes());
    renderApp('/sweeps/new');
    await paste(
      FILE.replace('method: random', 'method: grid')
        .replace('  trials: 12\n', '')
        .replace('{log_uniform: [1e-5, 1e-3]}', '[1e-5, 1e-4, 1e-3]'),
    );
    expect((await screen.findByTestId('sweep-trial-count')).textContent).toBe(
      '6 trials · every combination of the values',
    );
  });

  it("sends the project picked on the page instead of the file's, or none once cleared", async () => {
    const { requests } = stubFetch(
      routes({ [`POST ${SWEEPS}`]: { status: 201, body: makeSweep({ id: 9 }) } }),
    );
    const { unmount } = renderApp('/sweeps/new');
    // The file names project 3 in its template: the picker shows it.
    await paste(FILE.replace('sweep:\n', 'project: 3\nsweep:\n'));
    await waitFor(() => {
      expect(pickedProject()).toBe('vision-pretrain');
    });
    fireEvent.mouseDown(screen.getByRole('combobox', { name: 'Project' }));
    fireEvent.click(await screen.findByTitle('vision-eval'));
    await waitFor(() => {
      expect(pickedProject()).toBe('vision-eval');
    });
    fireEvent.click(submitButton());
    await screen.findByText('Submitted sweep lr-search.');
    expect(requests.find((r) => r.method === 'POST')?.body).toEqual({ ...BODY, project: 4 });
    unmount();

    // Cleared: no project, though the file named one.
    const second = stubFetch(
      routes({ [`POST ${SWEEPS}`]: { status: 201, body: makeSweep({ id: 10 }) } }),
    );
    renderApp('/sweeps/new');
    await paste(FILE.replace('  goal: min\n', '  goal: min\n  project: 3\n'));
    await waitFor(() => {
      expect(pickedProject()).toBe('vision-pretrain');
    });
    const picker = screen.getByTestId('sweep-project');
    fireEvent.click(within(picker).getByRole('button', { name: 'Clear' }));
    await waitFor(() => {
      expect(pickedProject()).toBe('No project');
    });
    fireEvent.click(submitButton());
    await screen.findByText('Submitted sweep lr-search.');
    expect(second.requests.find((r) => r.method === 'POST')?.body).toEqual({
      ...BODY,
      project: null,
    });
  });

  it('shows the early stopping and the ranking, and sends them', async () => {
    const { requests } = stubFetch(
      routes({ [`POST ${SWEEPS}`]: { status: 201, body: makeSweep({ id: 9 }) } }),
    );
    renderApp('/sweeps/new');
    const user = await paste(
      FILE.replace(
        '  goal: min\n',
        '  goal: min\n  rank_by: best\n  early_stop: median\n  stop_after_step: 200\n',
      ),
    );
    expect((await screen.findByTestId('sweep-early-stop')).textContent).toBe(
      'Median rule after step 200, judged against at least 3 other trials',
    );
    expect(screen.getByTestId('sweep-metric').textContent).toBe(
      'loss, lower is better · each trial by its best value over its steps',
    );
    await user.click(submitButton());
    await screen.findByText('Submitted sweep lr-search.');
    expect(requests.find((r) => r.method === 'POST')?.body).toEqual({
      ...BODY,
      rank_by: 'best',
      early_stop: 'median',
      stop_after_step: 200,
    });
  });

  it("shows a refusal's errors by field: a parameter's, the template's and the sweep's", async () => {
    const { requests } = stubFetch(
      routes({
        [`POST ${SWEEPS}`]: {
          status: 400,
          body: {
            detail: 'Invalid input.',
            errors: {
              'parameters.lr': ['log_uniform needs low above 0.'],
              template: { image: ['This field may not be blank.'] },
              seed: ['Ensure this value is less than or equal to 2147483647.'],
            },
          },
        },
      }),
    );
    const { router } = renderApp('/sweeps/new');
    const user = await paste(FILE);
    await screen.findByTestId('sweep-trial-count');
    await user.click(submitButton());

    const top = await screen.findByTestId('sweep-submit-error');
    expect(top.textContent).toBe(
      'The sweep was not submitted: no trial of it was queued.' +
        'seed: Ensure this value is less than or equal to 2147483647.' +
        'Errors of a parameter or of the job template are shown with it below.',
    );
    expect(screen.getByTestId('param-errors-lr').textContent).toBe(
      'log_uniform needs low above 0.',
    );
    expect(screen.queryByTestId('param-errors-opt')).toBeNull();
    expect(screen.getByTestId('template-errors').textContent).toBe(
      'image: This field may not be blank.',
    );
    expect(router.state.location.pathname).toBe('/sweeps/new');
    expect(requests.filter((r) => r.method === 'POST')).toHaveLength(1);

    // Forgotten once the file changes.
    await user.type(screen.getByLabelText('Sweep file (YAML or JSON)'), '#');
    await waitFor(() => {
      expect(screen.queryByTestId('sweep-submit-error')).toBeNull();
    });
    expect(screen.queryByTestId('param-errors-lr')).toBeNull();
  });

  it('lists what is wrong with the file and sends nothing', async () => {
    const { requests } = stubFetch(routes());
    renderApp('/sweeps/new');
    await paste(
      FILE.replace('pool: a800-train', 'pool: a800-train\nname: mine')
        .replace('"{{opt}}"', '{{opt}}')
        .replace('--wd, 1e-2', '--wd, "{{wd}}"')
        .replace('method: random', 'method: grid')
        .replace('  trials: 12\n', ''),
    );
    const problems = await screen.findByTestId('sweep-problems');
    expect(Array.from(problems.children, (li) => li.textContent)).toEqual([
      'parameters.lr: a grid takes lists of values, not ranges. Use method: random to draw from a range.',
      'name: set by the sweep for each trial; leave it out of the template.',
      'args[3]: not text. In YAML, quote a placeholder: "{{lr}}".',
      'args: no parameter named wd.',
    ]);

    expect(submitButton()).toHaveProperty('disabled', true);
    expect(pageRequests(requests).map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/auth/session/',
      'GET /api/v1/pools/',
      'GET /api/v1/tenants/vision/projects/',
    ]);
  });

  it("says what is wrong with the file's early stopping", async () => {
    stubFetch(routes());
    renderApp('/sweeps/new');
    await paste(
      FILE.replace(
        '  metric: loss\n',
        '  early_stop: median\n  stop_after_step: -5\n  stop_min_trials: 0\n',
      ),
    );
    const problems = await screen.findByTestId('sweep-problems');
    expect(Array.from(problems.children, (li) => li.textContent)).toEqual([
      'sweep.stop_after_step must be a whole number from 0.',
      'sweep.stop_min_trials must be a whole number from 1.',
      'early_stop: median compares the trials by their metric: name one in sweep.metric.',
    ]);
  });

  it('previews an adaptive search by its random startup', async () => {
    stubFetch(routes());
    renderApp('/sweeps/new');
    await paste(FILE.replace('  method: random\n', '  method: tpe\n  startup_trials: 5\n'));
    expect((await screen.findByTestId('sweep-trial-count')).textContent).toBe(
      '12 trials · the first 5 at random, then each chosen from the results',
    );
    expect(screen.getByTestId('sweep-overview').textContent).toContain('Adaptive (TPE)');
  });

  it('shows successive halving by its first rungs and brackets, and sends it', async () => {
    const { requests } = stubFetch(
      routes({ [`POST ${SWEEPS}`]: { status: 201, body: makeSweep({ id: 9 }) } }),
    );
    renderApp('/sweeps/new');
    const user = await paste(
      FILE.replace(
        '  goal: min\n',
        '  goal: min\n  early_stop: asha\n  stop_after_step: 100\n  reduction_factor: 2\n  brackets: 2\n',
      ),
    );
    expect((await screen.findByTestId('sweep-early-stop')).textContent).toBe(
      'Successive halving (ASHA): at steps 100, 200, 400, …, only the best 1/2 of the trials go on, judged against at least 3 other trials; 2 brackets side by side (Hyperband), more trials in those that stop earlier, their first rungs at steps 100, 200',
    );
    await user.click(submitButton());
    await screen.findByText('Submitted sweep lr-search.');
    expect(requests.find((r) => r.method === 'POST')?.body).toEqual({
      ...BODY,
      early_stop: 'asha',
      stop_after_step: 100,
      reduction_factor: 2,
      brackets: 2,
    });
  });

  it('says so in Chinese, and reads an uploaded JSON file', async () => {
    stubFetch(routes());
    await setLanguage('zh');
    const user = userEvent.setup();
    renderApp('/sweeps/new');
    const input = await waitFor(() => {
      const found = document.querySelector<HTMLInputElement>('input[type="file"]');
      if (found === null) throw new Error('no file input');
      return found;
    });
    const json = JSON.stringify({
      image: 'x',
      sweep: { name: 's', method: 'random', early_stop: 'pbt', parameters: { lr: [0.1, 0.2] } },
    });
    await user.upload(input, new File([json], 'sweep.json', { type: 'application/json' }));
    expect((await screen.findByTestId('sweep-file-name')).textContent).toBe('读取自 sweep.json');
    expect((await screen.findByTestId('sweep-problems')).textContent).toBe(
      '随机搜索需要 sweep.trials：要抽取的试验数。sweep.early_stop 为 "pbt"：请用 none、median 或 asha。',
    );
  });

  it('is not offered to viewers', async () => {
    const viewer: Session = {
      ...BOB,
      memberships: [{ tenant: { id: 1, slug: 'vision', name: 'Vision Lab' }, role: 'viewer' }],
    };
    stubFetch(routes({ 'GET /api/v1/auth/session/': sessionOf(viewer) }));
    renderApp('/sweeps/new');
    expect(await screen.findByText('Viewers cannot submit work')).toBeTruthy();
    expect(screen.queryByLabelText('Sweep file (YAML or JSON)')).toBeNull();
  });
});
