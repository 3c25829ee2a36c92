import { describe, expect, it } from 'vitest';
import { makeJob } from '../../test/fixtures';
import { nextStepValues } from './nextStep';

describe('nextStepValues', () => {
  it('takes where and on what the job ran, in the form’s units', () => {
    const job = makeJob({
      id: 12,
      pool: 2,
      project: 3,
      accelerator_model: 'Ascend910B',
      spec: {
        image: 'mindspore:2.3',
        command: ['python', 'prep.py'],
        topology: { mode: 'none', highest_tier: 'leaf' },
        replica_groups: [
          { name: 'worker', replicas: 4, accelerators: 8, cpu_milli: 2500, memory_mib: 1536 },
        ],
      },
    });
    expect(nextStepValues(job)).toEqual({
      after: [12],
      pool: 2,
      project: 3,
      image: 'mindspore:2.3',
      accelerator_model: 'Ascend910B',
      replica_groups: [{ name: 'worker', replicas: 4, accelerators: 8, cpu: 2.5, memory_gib: 1.5 }],
      topology_mode: 'none',
      topology_tier: 'leaf',
    });
  });

  it('leaves to the form what the spec lacks or does not make sense of', () => {
    const job = makeJob({
      id: 7,
      accelerator_model: '',
      spec: {
        accelerator_models: ['A800'],
        topology: { mode: 'sideways', highest_tier: 3 },
        replica_groups: [{ replicas: 2 }, { name: 'solo' }],
      },
    });
    expect(nextStepValues(job)).toEqual({
      after: [7],
      pool: 1,
      project: null,
      accelerator_model: 'A800',
      replica_groups: [{ name: 'solo', replicas: 1, accelerators: 0, cpu: 1, memory_gib: 1 }],
    });
    expect(nextStepValues(makeJob({ id: 7, spec: null, accelerator_model: undefined }))).toEqual({
      after: [7],
      pool: 1,
      project: null,
    });
  });
});
