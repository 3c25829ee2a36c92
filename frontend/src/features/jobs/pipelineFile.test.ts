import { describe, expect, it } from 'vitest';
import type { Pool } from '../../lib/apiTypes';
import { flattenErrors } from '../../lib/api';
import { readPipelineFile, resolvePool, stepErrors, type PipelineFile } from './pipelineFile';

function pool(id: number, name: string, cluster: string): Pool {
  return { id, name, cluster, description: '', capacity: [] };
}

// "train" is a pool of two clusters; "dup" names two pools of one cluster.
const POOLS: Pool[] = [
  pool(1, 'a800-train', 'sim-a800'),
  pool(2, 'train', 'bj'),
  pool(3, 'train', 'sh'),
  pool(4, 'dup', 'bj'),
  pool(5, 'dup', 'bj'),
];

const README = `
pool: a800-train
image: registry.example.com/ml/pytorch:2.5-cuda12
replica_groups: [{name: worker, replicas: 1, accelerators: 8}]
pipeline:
  - {name: prep, command: [python, prep.py]}
  - {name: train, command: [torchrun, train.py], after: [prep]}
  - {name: eval, command: [python, eval.py], after: [train]}
`;

function ok(file: PipelineFile) {
  if (!file.ok) throw new Error(`problems: ${JSON.stringify(file.problems)}`);
  return file;
}

function problems(file: PipelineFile) {
  if (file.ok) throw new Error('no problems');
  return file.problems;
}

describe('readPipelineFile', () => {
  it("merges the defaults into each step, the step's own fields winning", () => {
    const file = ok(
      readPipelineFile(
        `${README}priority: 3\nkind: training\n`.replace(
          '{name: eval,',
          '{name: eval, priority: 5, image: eval:1, replica_groups: [{name: w, accelerators: 1}],',
        ),
        POOLS,
      ),
    );
    const image = 'registry.example.com/ml/pytorch:2.5-cuda12';
    const groups = [{ name: 'worker', replicas: 1, accelerators: 8 }];
    expect(file.body.steps).toEqual([
      {
        pool: 1,
        image,
        replica_groups: groups,
        priority: 3,
        kind: 'training',
        name: 'prep',
        command: ['python', 'prep.py'],
      },
      {
        pool: 1,
        image,
        replica_groups: groups,
        priority: 3,
        kind: 'training',
        name: 'train',
        command: ['torchrun', 'train.py'],
        after: ['prep'],
      },
      {
        pool: 1,
        image: 'eval:1',
        replica_groups: [{ name: 'w', accelerators: 1 }],
        priority: 5,
        kind: 'training',
        name: 'eval',
        command: ['python', 'eval.py'],
        after: ['train'],
      },
    ]);
    expect(file.steps).toEqual([
      {
        index: 0,
        name: 'prep',
        pool: 1,
        acceleratorModel: undefined,
        devices: { whole: 8, milli: 0 },
        afterSteps: [],
        afterJobs: [],
      },
      {
        index: 1,
        name: 'train',
        pool: 1,
        acceleratorModel: undefined,
        devices: { whole: 8, milli: 0 },
        afterSteps: [0],
        afterJobs: [],
      },
      {
        index: 2,
        name: 'eval',
        pool: 1,
        acceleratorModel: undefined,
        devices: { whole: 1, milli: 0 },
        afterSteps: [1],
        afterJobs: [],
      },
    ]);
  });

  it('makes a step a training job unless it says otherwise, and sends its after as written', () => {
    const file = ok(
      readPipelineFile(
        `pool: 1
image: x
pipeline:
  - name: a
    after: [12, 13]
  - name: b
    kind: inference
    accelerator_model: A800
    replica_groups:
      - {name: w, replicas: 2, accelerators: 4, accelerator_milli: 500}
    after: [a, 12]
`,
        POOLS,
      ),
    );
    expect(file.body.steps.map((s) => [s.kind, s.after])).toEqual([
      ['training', [12, 13]],
      ['inference', ['a', 12]],
    ]);
    expect(file.steps[0]?.afterJobs).toEqual([12, 13]);
    expect(file.steps[1]).toMatchObject({
      acceleratorModel: 'A800',
      devices: { whole: 8, milli: 1000 },
      afterSteps: [0],
      afterJobs: [12],
    });
  });

  it('says each step that has no name, repeats a name or starts after no earlier step', () => {
    const found = problems(
      readPipelineFile(
        `image: x
pipeline:
  - {name: prep}
  - {command: [a]}
  - {name: "", after: [prep]}
  - {name: prep}
  - {name: train, after: [eval, prep, 7, 1.5, true]}
  - {name: eval, after: prep}
  - {name: self, after: [self]}
  - [not, a, step]
`,
        POOLS,
      ),
    );
    expect(found).toEqual([
      { code: 'noName', step: 2 },
      { code: 'noName', step: 3 },
      { code: 'duplicateName', step: 4, name: 'prep' },
      { code: 'afterNotEarlier', step: 5, name: 'train', ref: 'eval' },
      { code: 'afterBadRef', step: 5, name: 'train', ref: '1.5' },
      { code: 'afterBadRef', step: 5, name: 'train', ref: 'true' },
      { code: 'afterNotList', step: 6, name: 'eval' },
      { code: 'afterNotEarlier', step: 7, name: 'self', ref: 'self' },
      { code: 'stepNotMapping', step: 8 },
    ]);
  });

  it('takes a name quoted where YAML would read a number, and refuses the number', () => {
    expect(problems(readPipelineFile('image: x\npipeline: [{name: 007}]', POOLS))).toEqual([
      { code: 'noName', step: 1 },
    ]);
    expect(ok(readPipelineFile('image: x\npipeline: [{name: "007"}]', POOLS)).steps[0]?.name).toBe(
      '007',
    );
  });

  it('keeps the text of command and args items and env values as written', () => {
    const file = ok(
      readPipelineFile(
        `command: [python, 007]
env: {GLOBAL: on}
max_retries: 007
pipeline:
  - name: a
    command: [train, --lr, 1e-3, --tag, 007, --fp8, on, --x, ~, --y, 1.50, "quoted", 'single']
    args:
      - 0x1F
      - yes
      - 2024-06-01
    env:
      USE_FP8: no
      SEED: 007
      RATE: 1.0
      EMPTY: null
      ON: on
  - name: b
    after: [a]
`,
        POOLS,
      ),
    );
    const [a, b] = file.body.steps;
    expect(a?.command).toEqual([
      'train',
      '--lr',
      '1e-3',
      '--tag',
      '007',
      '--fp8',
      'on',
      '--x',
      '~',
      '--y',
      '1.50',
      'quoted',
      'single',
    ]);
    expect(a?.args).toEqual(['0x1F', 'yes', '2024-06-01']);
    expect(a?.env).toEqual({ USE_FP8: 'no', SEED: '007', RATE: '1.0', EMPTY: 'null', ON: 'on' });
    // The defaults' text too; elsewhere YAML's types apply.
    expect(b?.command).toEqual(['python', '007']);
    expect(b?.env).toEqual({ GLOBAL: 'on' });
    expect(a?.max_retries).toBe(7);
  });

  it('reads JSON as the CLI does (by the file name, or a document that starts with {)', () => {
    const json = JSON.stringify({
      pool: 'train',
      image: 'x',
      pipeline: [{ name: 'a', pool: 'bj/train', command: ['python', '007'] }, { name: 'b' }],
    });
    const file = ok(readPipelineFile(json.replace('"pool":"train",', ''), POOLS));
    expect(file.body.steps.map((s) => [s.name, s.pool, s.command])).toEqual([
      ['a', 2, ['python', '007']],
      ['b', undefined, undefined],
    ]);
    // Named .json: read as JSON even when it starts otherwise.
    expect(problems(readPipelineFile(' [1]', POOLS, 'steps.json')).map((p) => p.code)).toEqual([
      'notMapping',
    ]);
    const broken = problems(readPipelineFile('{"pipeline": [', POOLS));
    expect(broken).toEqual([{ code: 'json', message: expect.any(String) as string }]);
  });

  it('finds the pool by id, name or cluster/name, and says why it cannot', () => {
    const steps = (poolLine: string) =>
      readPipelineFile(`image: x\n${poolLine}\npipeline: [{name: a}, {name: b, pool: 3}]`, POOLS);
    expect(ok(steps('pool: a800-train')).body.steps.map((s) => s.pool)).toEqual([1, 3]);
    expect(ok(steps('pool: sh/train')).body.steps.map((s) => s.pool)).toEqual([3, 3]);
    expect(ok(steps('pool: "4"')).body.steps.map((s) => s.pool)).toEqual([4, 3]);
    expect(ok(steps('pool: 99')).body.steps.map((s) => s.pool)).toEqual([99, 3]);
    // The defaults' pool: said once, not for each step.
    expect(problems(steps('pool: h100'))).toEqual([
      {
        code: 'poolUnknown',
        pool: 'h100',
        pools: 'a800-train, bj/dup, bj/dup, bj/train, sh/train',
      },
    ]);
    expect(problems(steps('pool: train'))).toEqual([
      { code: 'poolInClusters', pool: 'train', clusters: 'bj, sh', example: 'bj/train' },
    ]);
    // A step's own pool: said of that step.
    expect(problems(readPipelineFile('image: x\npipeline: [{name: a, pool: dup}]', POOLS))).toEqual(
      [{ code: 'poolAmbiguous', step: 1, name: 'a', pool: 'dup', ids: '4, 5' }],
    );
    expect(resolvePool('gz/train', POOLS)).toEqual({
      ok: false,
      problem: expect.objectContaining({ code: 'poolUnknown', pool: 'gz/train' }) as unknown,
    });
    expect(resolvePool('x', [])).toEqual({
      ok: false,
      problem: { code: 'poolUnknown', pool: 'x', pools: '—' },
    });
  });

  it('refuses a file that is not a mapping with a pipeline list', () => {
    const codes = (text: string) => problems(readPipelineFile(text, POOLS));
    expect(codes('')).toEqual([{ code: 'empty' }]);
    expect(codes('  \n# only a comment\n')).toEqual([{ code: 'notMapping' }]);
    expect(codes('- name: a\n- name: b\n')).toEqual([{ code: 'notMapping' }]);
    expect(codes('just text')).toEqual([{ code: 'notMapping' }]);
    expect(codes('name: a\nimage: x\n')).toEqual([{ code: 'noPipeline' }]);
    expect(codes('pipeline: {name: a}')).toEqual([{ code: 'pipelineNotList' }]);
    expect(codes('pipeline: []')).toEqual([{ code: 'pipelineEmpty' }]);
    expect(codes('pipeline: [{name: a, max_wait_s: .inf}]')).toEqual([
      { code: 'notANumber', path: 'pipeline[0].max_wait_s' },
    ]);
    expect(codes('pipeline:\n  - name: a\n  - name: a\n name: b\n')).toEqual([
      { code: 'yaml', message: expect.stringContaining('line 4') as string },
    ]);
    expect(codes('a: 1\na: 2\n')).toEqual([
      { code: 'yaml', message: expect.stringContaining('Map keys must be unique') as string },
    ]);
  });

  it('drops a byte-order mark and follows anchors and merge keys', () => {
    const file = ok(
      readPipelineFile(
        `\uFEFFbase: &base {image: x, pool: a800-train}
pipeline:
  - {<<: *base, name: a}
`,
        POOLS,
      ),
    );
    expect(file.body.steps).toEqual([
      {
        base: { image: 'x', pool: 'a800-train' },
        image: 'x',
        pool: 1,
        name: 'a',
        kind: 'training',
      },
    ]);
  });
});

describe('stepErrors', () => {
  it("splits a refusal's errors by step, fields as the CLI says them", () => {
    const errors = flattenErrors({
      steps: {
        '1': {
          image: ['This field may not be blank.'],
          replica_groups: { '0': { accelerators: ['Too many.'] } },
          non_field_errors: ['A step of its own kind.'],
        },
        '2': ['Not a mapping.'],
        '9': { image: ['Out of range.'] },
      },
    });
    const { byStep, general } = stepErrors(errors, 3);
    expect(Object.fromEntries(byStep)).toEqual({
      1: [
        'image: This field may not be blank.',
        'replica_groups[0].accelerators: Too many.',
        'A step of its own kind.',
      ],
      2: ['Not a mapping.'],
    });
    expect(general).toEqual(['steps[9].image: Out of range.']);
    expect(stepErrors(flattenErrors({ steps: ['Too many steps.'] }), 3)).toEqual({
      byStep: new Map(),
      general: ['Too many steps.'],
    });
  });
});
