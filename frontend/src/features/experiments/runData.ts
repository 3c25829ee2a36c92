import type { MetricKey, Run } from './api';

export type ParamValue = string | number | boolean | null;

/** `?runs=3,1,2` → [3, 1, 2]: positive integers, first occurrence kept, junk dropped. */
export function parseRunIds(value: string | null): number[] {
  if (value === null) return [];
  const ids: number[] = [];
  for (const part of value.split(',')) {
    const id = Number(part.trim());
    if (part.trim() !== '' && Number.isInteger(id) && id > 0 && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/**
 * A run's config as flat `dotted.key: value` pairs: hyperparameters are often nested
 * (`optimizer: {lr, betas}`) but a table column or an axis needs one scalar each.
 * Lists are shown as JSON; they are rarely swept.
 */
export function flattenConfig(
  config: Record<string, unknown> | undefined,
): Record<string, ParamValue> {
  const out: Record<string, ParamValue> = {};
  const walk = (value: unknown, path: string): void => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length === 0 && path !== '') out[path] = '{}';
      for (const [key, inner] of entries) walk(inner, path === '' ? key : `${path}.${key}`);
      return;
    }
    if (path === '') return;
    if (
      value === null ||
      typeof value === 'string' ||
      typeof value === 'number' ||
      typeof value === 'boolean'
    ) {
      out[path] = value;
    } else {
      out[path] = JSON.stringify(value);
    }
  };
  walk(config ?? {}, '');
  return out;
}

export interface ParamColumn {
  key: string;
  /** True when the selected runs do not all share one value: what the comparison is about. */
  differs: boolean;
  numeric: boolean;
}

/** Every hyperparameter of any of the runs, the differing ones first, then by name. */
export function paramColumns(runs: Run[]): ParamColumn[] {
  const flat = runs.map((run) => flattenConfig(run.config));
  const keys = [...new Set(flat.flatMap((f) => Object.keys(f)))];
  const columns = keys.map((key) => {
    const values = flat.map((f) => (key in f ? f[key] : undefined));
    const distinct = new Set(values.map((v) => JSON.stringify(v ?? null)));
    const present = values.filter((v) => v !== undefined && v !== null);
    return {
      key,
      differs: distinct.size > 1,
      numeric: present.length > 0 && present.every((v) => typeof v === 'number'),
    };
  });
  return columns.sort((a, b) =>
    a.differs === b.differs ? a.key.localeCompare(b.key) : a.differs ? -1 : 1,
  );
}

/** Metric names across runs: loss-like keys first (what people compare), then by name. */
export function metricNames(runs: Pick<Run, 'keys'>[]): string[] {
  const names = [...new Set(runs.flatMap((run) => run.keys.map((k) => k.name)))];
  const rank = (name: string) => (name === 'loss' ? 0 : /loss/i.test(name) ? 1 : 2);
  return names.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

export function lastValue(run: Pick<Run, 'keys'>, name: string): number | null {
  return run.keys.find((k) => k.name === name)?.last_value ?? null;
}

/** The key among `keys` that matches the first of `patterns` that matches any. */
function pick(keys: MetricKey[], patterns: RegExp[]): MetricKey | undefined {
  for (const pattern of patterns) {
    const found = keys.find((k) => pattern.test(k.name));
    if (found) return found;
  }
  return undefined;
}

export interface RunKpis {
  loss?: MetricKey;
  throughput?: MetricKey;
  mfu?: MetricKey;
  /** The furthest step any series reached. */
  step: number | null;
}

/** Headline numbers of a run, by the usual key names (the SDK and simulator write these). */
export function runKpis(keys: MetricKey[]): RunKpis {
  const steps = keys.map((k) => k.last_step).filter((s): s is number => s !== null);
  return {
    loss: pick(keys, [/^loss$/, /^train[/_.]loss$/, /(^|[/_.])loss$/]),
    throughput: pick(keys, [
      /tokens_per_s(ec)?$/,
      /samples_per_s(ec)?$/,
      /throughput/,
      /(^|[/_.])tps$/,
    ]),
    mfu: pick(keys, [/(^|[/_.])mfu$/i]),
    step: steps.length > 0 ? Math.max(...steps) : null,
  };
}

/** A hyperparameter or metric value as table text. */
export function formatParam(value: ParamValue | undefined): string {
  if (value === undefined || value === null) return '—';
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return String(value);
    const abs = Math.abs(value);
    return abs !== 0 && (abs < 1e-3 || abs >= 1e6)
      ? value.toExponential(3).replace(/\.?0+e/, 'e') // 3e-4, not 3.000e-4
      : String(+value.toPrecision(6));
  }
  return String(value);
}
