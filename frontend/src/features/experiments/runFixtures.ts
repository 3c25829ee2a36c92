import type { Checkpoint, Run } from './api';

/** A run as the API answers it, for tests. */
export function makeRun(overrides: Partial<Run> = {}): Run {
  return {
    id: 1,
    name: 'llama-lr3e-4',
    project: null,
    job: 11,
    job_state: 'running',
    owner: 'bob',
    state: 'running',
    config: { lr: 0.0003, batch_size: 256, optimizer: { name: 'adamw', beta2: 0.95 } },
    tags: ['sweep-a'],
    simulated: false,
    keys: [
      { name: 'loss', count: 1200, first_step: 0, last_step: 1199, last_value: 2.31 },
      { name: 'perf/mfu', count: 1200, first_step: 0, last_step: 1199, last_value: 0.412 },
      {
        name: 'perf/tokens_per_s',
        count: 1200,
        first_step: 0,
        last_step: 1199,
        last_value: 48000,
      },
    ],
    created_at: '2026-11-30T00:00:00Z',
    updated_at: '2026-11-30T01:00:00Z',
    ...overrides,
  };
}

export function makeCheckpoint(overrides: Partial<Checkpoint> = {}): Checkpoint {
  return {
    id: 5,
    run: 1,
    job: 11,
    step: 1000,
    path: 's3://ckpt/llama/step-1000',
    shards: 8,
    shards_done: 8,
    size_bytes: 3 * 2 ** 30,
    state: 'complete',
    manifest: {},
    created_at: '2026-11-30T00:50:00Z',
    completed_at: '2026-11-30T00:51:00Z',
    ...overrides,
  };
}

/** A metrics answer with the given series (steps 0..n-1). */
export function seriesAnswer(run: number, series: Record<string, number[]>) {
  return {
    status: 200,
    body: {
      run,
      max_points: 1000,
      series: Object.fromEntries(
        Object.entries(series).map(([key, values]) => [
          key,
          { steps: values.map((_, i) => i), values, count: values.length, downsampled: false },
        ]),
      ),
    },
  };
}
