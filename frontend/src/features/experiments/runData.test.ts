import { describe, expect, it } from 'vitest';
import { makeRun } from './runFixtures';
import {
  flattenConfig,
  formatParam,
  metricNames,
  paramColumns,
  parseRunIds,
  runKpis,
} from './runData';

describe('run data', () => {
  it('parses run ids from the URL, dropping junk and repeats', () => {
    expect(parseRunIds('3,1, 2,x,1,-4,0,2.5,')).toEqual([3, 1, 2]);
    expect(parseRunIds(null)).toEqual([]);
  });

  it('flattens nested hyperparameters into dotted keys', () => {
    expect(
      flattenConfig({ lr: 1e-4, opt: { name: 'adamw', betas: [0.9, 0.95] }, empty: {}, n: null }),
    ).toEqual({ lr: 1e-4, 'opt.name': 'adamw', 'opt.betas': '[0.9,0.95]', empty: '{}', n: null });
  });

  it('puts differing hyperparameters first and marks numeric ones', () => {
    const a = makeRun({ id: 1, config: { lr: 0.001, seed: 1, model: 'llama' } });
    const b = makeRun({ id: 2, config: { lr: 0.0003, seed: 1, model: 'llama', warmup: 100 } });
    expect(paramColumns([a, b])).toEqual([
      { key: 'lr', differs: true, numeric: true },
      { key: 'warmup', differs: true, numeric: true },
      { key: 'model', differs: false, numeric: false },
      { key: 'seed', differs: false, numeric: true },
    ]);
  });

  it('orders loss first and picks KPIs by the usual key names', () => {
    const run = makeRun();
    expect(metricNames([run])).toEqual(['loss', 'perf/mfu', 'perf/tokens_per_s']);
    const kpis = runKpis(run.keys);
    expect([kpis.loss?.name, kpis.throughput?.name, kpis.mfu?.name, kpis.step]).toEqual([
      'loss',
      'perf/tokens_per_s',
      'perf/mfu',
      1199,
    ]);
    expect(runKpis([]).step).toBeNull();
  });

  it('formats values compactly', () => {
    expect([
      formatParam(0.0003),
      formatParam(256),
      formatParam(2.3456789),
      formatParam(null),
    ]).toEqual(['3e-4', '256', '2.34568', '—']);
  });
});
