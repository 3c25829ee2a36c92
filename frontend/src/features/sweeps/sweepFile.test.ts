import { describe, expect, it } from 'vitest';
import { flattenErrors } from '../../lib/api';
import type { Pool } from '../../lib/apiTypes';
import { readSweepFile, sweepErrors, type SweepFile } from './sweepFile';

function pool(id: number, name: string, cluster: string): Pool {
  return { id, name, cluster, description: '', capacity: [] };
}

// "train" is a pool of one cluster; "gpu" of two.
const POOLS: Pool[] = [pool(1, 'train', 'bj'), pool(2, 'gpu', 'bj'), pool(3, 'gpu', 'sh')];

const README = `pool: train
image: registry.example.com/ml/pytorch:2.5-cuda12
replica_groups: [{name: worker, replicas: 1, accelerators: 8}]
command: [python, train.py]
args: [--lr, "{{lr}}", --opt, "{{opt}}"]
sweep:
  name: lr-search
  method: random      # or grid
  trials: 12          # random only
  seed: 7             # optional
  parallel: 4
  metric: loss
  goal: min
  parameters:
    lr: {log_uniform: [1e-5, 1e-3]}
    opt: [adam, lion]
`;

const GRID = `pool: 1
image: x
args: ["--lr={{ lr }}", --bs, "{{bs}}", --opt, "{{opt}}"]
sweep:
  name: grid-search
  method: grid
  parameters:
    lr: [1e-4, 3e-4, 1e-3]
    bs: {values: [32, 64]}
    opt: [adam]
`;

function ok(file: SweepFile) {
  if (!file.ok) throw new Error(`problems: ${JSON.stringify(file.problems)}`);
  return file;
}

function problems(file: SweepFile) {
  if (file.ok) throw new Error('no problems');
  return file.problems;
}

describe('readSweepFile', () => {
  it("reads the README's random search: the sweep's fields and the rest as its template", () => {
    const file = ok(readSweepFile(README, POOLS));
    expect(file.body).toEqual({
      name: 'lr-search',
      method: 'random',
      trials: 12,
      seed: 7,
      parallel: 4,
      metric: 'loss',
      goal: 'min',
      // Numbers stay numbers inside parameters: 1e-5 is YAML 1.2's float.
      parameters: { lr: { log_uniform: [0.00001, 0.001] }, opt: ['adam', 'lion'] },
      template: {
        pool: 1,
        image: 'registry.example.com/ml/pytorch:2.5-cuda12',
        replica_groups: [{ name: 'worker', replicas: 1, accelerators: 8 }],
        command: ['python', 'train.py'],
        args: ['--lr', '{{lr}}', '--opt', '{{opt}}'],
      },
    });
    expect(file.summary).toMatchObject({
      name: 'lr-search',
      method: 'random',
      trials: 12,
      parallel: 4,
      seed: 7,
      metric: 'loss',
      goal: 'min',
      // Left out: the newest value ranks; early stopping off, with the API's defaults.
      rankBy: 'last',
      earlyStop: 'none',
      stopAfterStep: 0,
      stopMinTrials: 3,
      reductionFactor: 3,
      pool: 1,
      devices: { whole: 8, milli: 0 },
      parameters: [
        { name: 'lr', kind: 'log_uniform', values: [0.00001, 0.001] },
        { name: 'opt', kind: 'values', values: ['adam', 'lion'] },
      ],
    });
  });

  it('counts a grid as the product of its lists, and sends no trials for it', () => {
    const file = ok(readSweepFile(GRID, POOLS));
    expect(file.summary.trials).toBe(6);
    expect(file.summary.method).toBe('grid');
    expect(file.summary.parallel).toBe(4);
    expect(file.body).not.toHaveProperty('trials');
    expect(file.body.parameters).toEqual({
      lr: [0.0001, 0.0003, 0.001],
      bs: { values: [32, 64] },
      opt: ['adam'],
    });
    // The grid's own size is accepted as trials; any other is not.
    expect(
      ok(readSweepFile(GRID.replace('method: grid', 'method: grid\n  trials: 6'), POOLS)).summary
        .trials,
    ).toBe(6);
    expect(
      problems(readSweepFile(GRID.replace('method: grid', 'method: grid\n  trials: 5'), POOLS)),
    ).toEqual([{ code: 'gridTrials', size: 6 }]);
  });

  it('keeps command, args and env values of the template as written, not as YAML reads them', () => {
    const file = ok(
      readSweepFile(
        `image: x
command: [python, train.py, 007]
args: [--wd, 1e-3, --amp, on, --lr, "{{lr}}", --none, ~]
env: {FP8: no, SEED: 0x10, LR: "{{lr}}"}
sweep:
  name: s
  method: grid
  parameters: {lr: [1e-5, 0.5, true, "1e-3"]}
`,
        POOLS,
      ),
    );
    expect(file.body.template).toEqual({
      image: 'x',
      command: ['python', 'train.py', '007'],
      args: ['--wd', '1e-3', '--amp', 'on', '--lr', '{{lr}}', '--none', '~'],
      env: { FP8: 'no', SEED: '0x10', LR: '{{lr}}' },
    });
    expect(file.body.parameters).toEqual({ lr: [0.00001, 0.5, true, '1e-3'] });
  });

  it('reads JSON, and a pool given as cluster/name', () => {
    const json = JSON.stringify({
      pool: 'sh/gpu',
      image: 'x',
      sweep: { name: 's', method: 'random', trials: 3, parameters: { lr: { uniform: [0, 1] } } },
    });
    const file = ok(readSweepFile(`\uFEFF${json}`, POOLS, 'sweep.json'));
    expect(file.body.template).toEqual({ pool: 3, image: 'x' });
    expect(file.summary.trials).toBe(3);
  });

  it('says when there is no sweep, name or parameters', () => {
    expect(problems(readSweepFile('image: x\n', POOLS))).toEqual([{ code: 'noSweep' }]);
    expect(problems(readSweepFile('image: x\nsweep: [a]\n', POOLS))).toEqual([
      { code: 'sweepNotMapping' },
    ]);
    expect(problems(readSweepFile('- a\n', POOLS))).toEqual([{ code: 'notMapping' }]);
    expect(problems(readSweepFile('  \n', POOLS))).toEqual([{ code: 'empty' }]);
    expect(problems(readSweepFile('sweep: {name: [\n', POOLS))[0]?.code).toBe('yaml');
    expect(
      problems(
        readSweepFile('image: x\nsweep: {method: random, trials: 2, parameters: {}}\n', POOLS),
      ),
    ).toEqual([{ code: 'noName' }, { code: 'noParameters' }]);
  });

  it('lists every problem: fields the sweep sets, unknown placeholders, trials, ranges, pools', () => {
    const found = problems(
      readSweepFile(
        `name: mine
kind: training
after: [3]
pool: gpu
command: [python, train.py, "{{epochs}}"]
args: [--lr, {{lr}}]
env: {OPT: "{{optimiser}}-{{lr}}"}
sweep:
  name: s
  method: grid
  image: y
  parameters:
    lr: {log_uniform: [1e-5, 1e-3]}
    wd: {normal: [0, 1]}
`,
        POOLS,
      ),
    );
    expect(found).toEqual([
      { code: 'unknownField', field: 'image' },
      { code: 'badParameter', parameter: 'wd' },
      { code: 'gridRange', parameter: 'lr' },
      { code: 'setBySweep', field: 'name' },
      { code: 'setBySweep', field: 'kind' },
      { code: 'setBySweep', field: 'after' },
      // An unquoted {{lr}} is a YAML mapping, not text.
      { code: 'notText', path: 'args[1]' },
      { code: 'unknownPlaceholder', field: 'command', names: 'epochs' },
      { code: 'unknownPlaceholder', field: 'env', names: 'optimiser' },
      { code: 'poolInClusters', pool: 'gpu', clusters: 'bj, sh', example: 'bj/gpu' },
    ]);
  });

  it('needs trials, a whole number, for a random search, and grid or random as the method', () => {
    const random = (extra: string) =>
      readSweepFile(`image: x\nsweep:\n  name: s\n${extra}  parameters: {lr: [1, 2]}\n`, POOLS);
    expect(problems(random(''))).toEqual([{ code: 'randomNoTrials' }]);
    expect(problems(random('  trials: 2.5\n'))).toEqual([{ code: 'badTrials' }]);
    expect(problems(random('  method: bayes\n'))).toEqual([
      { code: 'badMethod', method: '"bayes"' },
    ]);
    expect(ok(random('  trials: 2\n')).summary).toMatchObject({ method: 'random', trials: 2 });
  });

  /** A random sweep of 4 trials with `extra` sweep fields, ranked by loss unless told. */
  const sweep = (extra: string, metric = '  metric: loss\n') =>
    readSweepFile(
      `image: x\nsweep:\n  name: s\n  trials: 4\n${metric}${extra}  parameters: {lr: [1, 2]}\n`,
      POOLS,
    );

  it('sends early stopping as written, and says what is wrong with it', () => {
    const file = ok(sweep('  early_stop: median\n  stop_after_step: 200\n  stop_min_trials: 2\n'));
    expect(file.body).toMatchObject({
      early_stop: 'median',
      stop_after_step: 200,
      stop_min_trials: 2,
    });
    expect(file.summary).toMatchObject({
      earlyStop: 'median',
      stopAfterStep: 200,
      stopMinTrials: 2,
    });
    expect(ok(sweep('  early_stop: median\n')).summary).toMatchObject({
      stopAfterStep: 0,
      stopMinTrials: 3,
    });
    // Off needs no metric.
    expect(ok(sweep('  early_stop: none\n', '')).summary.earlyStop).toBe('none');

    expect(problems(sweep('  early_stop: hyperband\n'))).toEqual([
      { code: 'badEarlyStop', value: '"hyperband"' },
    ]);
    expect(problems(sweep('  stop_after_step: -1\n'))).toEqual([{ code: 'badStopAfterStep' }]);
    expect(problems(sweep('  stop_after_step: 1.5\n'))).toEqual([{ code: 'badStopAfterStep' }]);
    expect(problems(sweep('  stop_after_step: "200"\n'))).toEqual([{ code: 'badStopAfterStep' }]);
    expect(problems(sweep('  stop_min_trials: 0\n'))).toEqual([{ code: 'badStopMinTrials' }]);
    expect(problems(sweep('  early_stop: median\n', ''))).toEqual([
      { code: 'earlyStopNoMetric', rule: 'median' },
    ]);
    expect(problems(sweep('  early_stop: median\n', '  metric: ""\n'))).toEqual([
      { code: 'earlyStopNoMetric', rule: 'median' },
    ]);
  });

  it('reads an adaptive (tpe) search: its trials, its random startup and its metric', () => {
    const tpe = (extra: string, metric = '  metric: loss\n') =>
      readSweepFile(
        `image: x\nsweep:\n  name: s\n  method: tpe\n${metric}${extra}  parameters: {lr: [1, 2]}\n`,
        POOLS,
      );
    const file = ok(tpe('  trials: 20\n  startup_trials: 5\n'));
    expect(file.body).toMatchObject({ method: 'tpe', trials: 20, startup_trials: 5 });
    expect(file.summary).toMatchObject({ method: 'tpe', trials: 20, startupTrials: 5 });
    expect(ok(tpe('  trials: 11\n')).summary.startupTrials).toBe(10);

    expect(problems(tpe(''))).toEqual([{ code: 'randomNoTrials' }]);
    expect(problems(tpe('  trials: 10\n'))).toEqual([{ code: 'tpeTrials', size: 10 }]);
    expect(problems(tpe('  trials: 12\n', ''))).toEqual([{ code: 'tpeNoMetric' }]);
    expect(problems(tpe('  trials: 12\n  startup_trials: 0\n'))).toEqual([
      { code: 'badStartupTrials' },
    ]);
  });

  it("takes a replica group's size from a parameter, and names one it does not know", () => {
    const scaled = README.replace(
      '{name: worker, replicas: 1, accelerators: 8}',
      '{name: worker, replicas: "{{nodes}}", accelerators: "{{ gpus }}"}',
    );
    const file = ok(
      readSweepFile(
        scaled.replace(
          '    opt: [adam, lion]\n',
          '    opt: [adam, lion]\n    gpus: [4, 8]\n    nodes: [1, 2]\n',
        ),
        POOLS,
      ),
    );
    expect(file.summary.sizedBy).toEqual(['gpus', 'nodes']);
    expect(file.summary.devices).toBeUndefined();
    expect(file.body.template).toMatchObject({
      replica_groups: [{ name: 'worker', replicas: '{{nodes}}', accelerators: '{{ gpus }}' }],
    });
    expect(ok(readSweepFile(README, POOLS)).summary.sizedBy).toEqual([]);
    expect(problems(readSweepFile(scaled, POOLS))).toEqual([
      { code: 'unknownPlaceholder', field: 'replica_groups', names: 'gpus, nodes' },
    ]);
  });

  it('reads which value ranks a trial: its newest or its best, nothing else', () => {
    const file = ok(sweep('  rank_by: best\n'));
    expect(file.body).toMatchObject({ rank_by: 'best' });
    expect(file.summary.rankBy).toBe('best');
    expect(ok(sweep('  rank_by: last\n')).summary.rankBy).toBe('last');
    expect(problems(sweep('  rank_by: mean\n'))).toEqual([{ code: 'badRankBy', value: '"mean"' }]);
    expect(problems(sweep('  rank_by: 1\n'))).toEqual([{ code: 'badRankBy', value: '1' }]);
  });

  it('reads successive halving: its first rung and its reduction factor', () => {
    const file = ok(sweep('  early_stop: asha\n  stop_after_step: 100\n  reduction_factor: 4\n'));
    expect(file.body).toMatchObject({
      early_stop: 'asha',
      stop_after_step: 100,
      reduction_factor: 4,
    });
    expect(file.summary).toMatchObject({
      earlyStop: 'asha',
      stopAfterStep: 100,
      reductionFactor: 4,
    });
    expect(ok(sweep('  early_stop: asha\n  stop_after_step: 1\n')).summary.reductionFactor).toBe(3);

    // The server's checks: a first rung from step 1, a factor from 2 to 16, a metric.
    expect(problems(sweep('  early_stop: asha\n'))).toEqual([{ code: 'ashaNoFirstRung' }]);
    for (const factor of ['1', '17', '2.5', '"3"']) {
      expect(problems(sweep(`  reduction_factor: ${factor}\n`))).toEqual([
        { code: 'badReductionFactor' },
      ]);
    }
    expect(problems(sweep('  early_stop: asha\n  stop_after_step: 50\n', ''))).toEqual([
      { code: 'earlyStopNoMetric', rule: 'asha' },
    ]);

    // Brackets side by side: 1 to 4, halving's only.
    const bracketed = ok(sweep('  early_stop: asha\n  stop_after_step: 100\n  brackets: 3\n'));
    expect(bracketed.body).toMatchObject({ brackets: 3 });
    expect(bracketed.summary.brackets).toBe(3);
    expect(ok(sweep('  early_stop: asha\n  stop_after_step: 1\n')).summary.brackets).toBe(1);
    for (const count of ['0', '5', '1.5', '"2"']) {
      expect(
        problems(sweep(`  early_stop: asha\n  stop_after_step: 1\n  brackets: ${count}\n`)),
      ).toEqual([{ code: 'badBrackets' }]);
    }
    expect(problems(sweep('  early_stop: median\n  brackets: 2\n'))).toEqual([
      { code: 'bracketsNotAsha' },
    ]);
  });
});

describe('sweepErrors', () => {
  it("splits a refusal's errors: each parameter's, the template's and the sweep's own", () => {
    const errors = flattenErrors({
      'parameters.lr': ['log_uniform needs low above 0.'],
      'parameters.zz': ['Unknown kind.'],
      parameters: ['Trial 2 (lr=0.1) makes a job that is refused.'],
      template: {
        image: ['This field may not be blank.'],
        replica_groups: { '0': { accelerators: ['Ensure this value is at most 16.'] } },
      },
      trials: ['A random search needs the number of trials.'],
    });
    const split = sweepErrors(errors, ['lr', 'opt']);
    expect([...split.byParameter]).toEqual([['lr', ['log_uniform needs low above 0.']]]);
    expect(split.template).toEqual([
      'image: This field may not be blank.',
      'replica_groups[0].accelerators: Ensure this value is at most 16.',
    ]);
    expect(split.general).toEqual([
      'parameters.zz: Unknown kind.',
      'parameters: Trial 2 (lr=0.1) makes a job that is refused.',
      'trials: A random search needs the number of trials.',
    ]);
  });
});
