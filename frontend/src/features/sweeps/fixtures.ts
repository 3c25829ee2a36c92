import type { Sweep, SweepDetail, SweepResult } from '../../lib/apiTypes';

export const SWEEPS = '/api/v1/tenants/vision/sweeps/';

/** Trial `index` of sweep lr-search: its values, and its job, run and value where given. */
export function makeResult(
  index: number,
  params: Record<string, unknown>,
  more: Partial<SweepResult> = {},
): SweepResult {
  return {
    index,
    params,
    job: null,
    run: null,
    value: null,
    step: null,
    rank: null,
    last_value: more.value ?? null,
    last_step: more.step ?? null,
    bracket: null,
    stopped_step: null,
    ...more,
  };
}

/** A random search of lr and opt by bob, minimising loss: 6 trials, 4 of them started. */
export function makeSweep(overrides: Partial<Sweep> = {}): Sweep {
  return {
    id: 5,
    name: 'lr-search',
    project: null,
    owner: 'bob',
    method: 'random',
    parameters: { lr: { log_uniform: [1e-5, 1e-3] }, opt: ['adam', 'lion'] },
    trials: 6,
    seed: 7,
    parallel: 2,
    metric: 'loss',
    goal: 'min',
    rank_by: 'last',
    early_stop: 'none',
    stop_after_step: 0,
    stop_min_trials: 3,
    reduction_factor: 3,
    startup_trials: 10,
    template: {
      pool: 1,
      image: 'registry.example.com/ml/pytorch:2.5-cuda12',
      replica_groups: [{ name: 'worker', replicas: 1, accelerators: 8 }],
      command: ['python', 'train.py'],
      args: ['--lr', '{{lr}}', '--opt', '{{opt}}'],
    },
    state: 'running',
    note: '',
    counts: { waiting: 2, active: 2, succeeded: 1, failed: 1, cancelled: 0, stopped_early: 0 },
    best: null,
    created_at: '2026-12-01T08:00:00Z',
    finished_at: null,
    ...overrides,
  };
}

/** Trials 1-4 have jobs (41-44); 2 and 3 reported loss, 3 the lower; 5 and 6 wait. */
export const RESULTS: SweepResult[] = [
  makeResult(
    1,
    { lr: 0.0003, opt: 'adam' },
    { job: { id: 41, name: 'lr-search-1', state: 'failed' }, run: 71 },
  ),
  makeResult(
    2,
    { lr: 0.00002, opt: 'lion' },
    {
      job: { id: 42, name: 'lr-search-2', state: 'succeeded' },
      run: 72,
      value: 0.52,
      step: 1000,
      rank: 2,
    },
  ),
  makeResult(
    3,
    { lr: 0.0001, opt: 'adam' },
    {
      job: { id: 43, name: 'lr-search-3', state: 'running' },
      run: 73,
      value: 0.31,
      step: 600,
      rank: 1,
    },
  ),
  makeResult(
    4,
    { lr: 0.0007, opt: 'lion' },
    { job: { id: 44, name: 'lr-search-4', state: 'queued' } },
  ),
  makeResult(5, { lr: 0.00005, opt: 'adam' }),
  makeResult(6, { lr: 0.0009, opt: 'lion' }),
];

export function makeSweepDetail(
  overrides: Partial<SweepDetail> = {},
  results: SweepResult[] = RESULTS,
): SweepDetail {
  const best = results.find((r) => r.rank === 1) ?? null;
  return { ...makeSweep({ best }), outcomes: results, ...overrides };
}
