import type { TFunction } from 'i18next';
import type { SweepCounts, SweepDetail, SweepResult } from '../../lib/apiTypes';
import { formatParam } from '../experiments/runData';

/** The results best first: ranked trials by rank, then those without a value by index. */
export function byRank(results: readonly SweepResult[]): SweepResult[] {
  return [...results].sort((a, b) => {
    if (a.rank !== null && b.rank !== null) return a.rank - b.rank;
    if (a.rank !== null) return -1;
    if (b.rank !== null) return 1;
    return a.index - b.index;
  });
}

/** The parameters' names: the sweep's, in the order submitted, then any other a trial has. */
export function parameterNames(sweep: Pick<SweepDetail, 'parameters' | 'outcomes'>): string[] {
  const names = Object.keys(sweep.parameters);
  for (const result of sweep.outcomes) {
    for (const name of Object.keys(result.params)) if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** A parameter's value (any JSON) or a metric value as table text. */
export function valueText(value: unknown): string {
  if (
    value === undefined ||
    value === null ||
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean'
  ) {
    return formatParam(value);
  }
  return JSON.stringify(value);
}

/** The most runs the "Compare runs" link names: each is fetched and drawn by the compare
 * page, which is for a handful of runs, not a whole sweep. */
export const COMPARE_MOST = 10;

/** The trials' runs for the compare page, best first (their colour order there). */
export function compareRunIds(results: readonly SweepResult[]): number[] {
  return byRank(results)
    .map((r) => r.run)
    .filter((run): run is number => run !== null);
}

/** The parallel chart's axes and lines: one axis per parameter (numeric where every trial's
 * value is a number), then the metric; one line per trial that has a value, best first. */
export function chartOf(sweep: SweepDetail, metricAxis: string) {
  const names = parameterNames(sweep);
  const scored = byRank(sweep.outcomes).filter((r) => r.value !== null);
  const axes = [
    ...names.map((name) => ({
      name,
      numeric: scored.every((r) => typeof r.params[name] === 'number'),
    })),
    { name: metricAxis, numeric: true },
  ];
  const rows = scored.map((r) => ({
    name: `#${r.index}`,
    values: [
      ...names.map((name) => {
        const value = r.params[name];
        return typeof value === 'number' || typeof value === 'string'
          ? value
          : value === undefined || value === null
            ? null
            : JSON.stringify(value);
      }),
      r.value,
    ],
  }));
  return { axes, rows };
}

/** The trials of each state, in the order the progress shows them. */
export const COUNT_ORDER = [
  'succeeded',
  'failed',
  'cancelled',
  'stopped_early',
  'active',
  'waiting',
] as const;

export function totalOf(counts: SweepCounts): number {
  return COUNT_ORDER.reduce((sum, key) => sum + counts[key], 0);
}

/** The sweep's metric in words: none, or its goal and which of a trial's values ranks it. */
export function metricText(t: TFunction, metric: string, goal: unknown, rankBy: unknown): string {
  if (metric === '') return t('sweeps.noMetric');
  const ranked = t(`sweeps.rankBy.${rankBy === 'best' ? 'best' : 'last'}`);
  return `${t(`sweeps.goal.${goal === 'max' ? 'max' : 'min'}`, { metric })} · ${ranked}`;
}

/** How many of a rule's first rungs its summary names before "…". */
const RUNGS_SHOWN = 3;

/** A sweep's early stopping in words: off, the median rule with its step and trials, or
 * successive halving with its first rungs, its fraction and trials. */
export function earlyStopText(
  t: TFunction,
  rule: {
    earlyStop?: string;
    stopAfterStep: number;
    stopMinTrials: number;
    reductionFactor: number;
    brackets?: number;
  },
): string {
  if (rule.earlyStop === 'median') {
    return t('sweeps.earlyStopMedian', { step: rule.stopAfterStep, count: rule.stopMinTrials });
  }
  if (rule.earlyStop === 'asha') {
    const rungs = Array.from(
      { length: RUNGS_SHOWN },
      (_, k) => rule.stopAfterStep * rule.reductionFactor ** k,
    );
    const halving = t('sweeps.earlyStopAsha', {
      rungs: [...rungs.map(String), '…'].join(t('sweeps.rungSeparator')),
      factor: rule.reductionFactor,
      count: rule.stopMinTrials,
    });
    const brackets = rule.brackets ?? 1;
    if (brackets <= 1) return halving;
    // Bracket k starts at the k-th rung (apps/sweeps/rules.py in_bracket).
    const starts = Array.from(
      { length: brackets },
      (_, k) => rule.stopAfterStep * rule.reductionFactor ** k,
    );
    return `${halving}${t('sweeps.brackets', {
      count: brackets,
      starts: starts.map(String).join(t('sweeps.rungSeparator')),
    })}`;
  }
  return t('sweeps.earlyStopOff');
}
