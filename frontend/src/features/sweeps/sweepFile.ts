import type { Pool } from '../../lib/apiTypes';
import {
  devicesOf,
  fieldPath,
  isInteger,
  isMapping,
  notNumbers,
  readDocument,
  resolvePool,
  type DocumentProblem,
  type Mapping,
  type PipelineStepSummary,
  type PoolMiss,
} from '../jobs/pipelineFile';

/**
 * A sweep file, as `zs submit -f sweep.yaml` takes it: a YAML or JSON mapping whose `sweep`
 * holds the sweep's own fields (name, method, parameters...) and whose other fields are the
 * job template every trial is made from. It is read as a pipeline file is (pipelineFile.ts:
 * command, args and env values kept as written, the pool by name, `cluster/name` or id), and
 * checked here for what the page can say before sending; the server checks the rest
 * (apps/sweeps/space.py and the job fields of each trial).
 */

/** The key of the sweep's own fields in a sweep file. */
export const SWEEP = 'sweep';

/** What `sweep:` may hold: the API's sweep fields other than `template`. */
export const SWEEP_FIELDS = [
  'name',
  'method',
  'trials',
  'seed',
  'parallel',
  'metric',
  'goal',
  'rank_by',
  'early_stop',
  'stop_after_step',
  'stop_min_trials',
  'reduction_factor',
  'brackets',
  'startup_trials',
  'project',
  'parameters',
] as const;

/** Job fields the sweep sets for each trial (apps/sweeps/api/serializers.py SET_BY_SWEEP). */
const SET_BY_SWEEP = ['name', 'kind', 'after'] as const;

/** The API's default of `parallel`: trials queued or running at once. */
export const DEFAULT_PARALLEL = 4;

/** The API's defaults of the early-stopping fields (apps/sweeps/models.py). */
export const DEFAULT_STOP_AFTER_STEP = 0;
export const DEFAULT_STOP_MIN_TRIALS = 3;
export const DEFAULT_REDUCTION_FACTOR = 3;
/** The API's default of `startup_trials`: a tpe sweep's first trials, drawn at random. */
export const DEFAULT_STARTUP_TRIALS = 10;

/** Which of a trial's values of the metric ranks it (apps/sweeps/models.py RankBy). */
export type RankBy = 'last' | 'best';
const RANK_BY: readonly string[] = ['last', 'best'];

/** The search methods the API knows (apps/sweeps/models.py SweepMethod). */
export type SweepMethod = 'grid' | 'random' | 'tpe';
const METHODS: readonly string[] = ['grid', 'random', 'tpe'];
/** The API's bounds of `reduction_factor` (apps/sweeps/api/serializers.py). */
const REDUCTION_FACTOR_MIN = 2;
const REDUCTION_FACTOR_MAX = 16;
/** The most halving brackets the API runs side by side (apps/sweeps/api/serializers.py). */
const BRACKETS_MAX = 4;

/** The early-stopping rules the API knows. */
export type EarlyStopRule = 'none' | 'median' | 'asha';
const RULES: readonly string[] = ['none', 'median', 'asha'];

export type ParameterKind = 'values' | 'uniform' | 'log_uniform' | 'int';
const KINDS: readonly string[] = ['values', 'uniform', 'log_uniform', 'int'];

/** `{{name}}` in a template's text, as the server finds it (apps/sweeps/space.py PLACEHOLDER). */
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** What is wrong with a file, for the page to say in the reader's language. */
export type SweepProblem =
  | DocumentProblem
  | { code: 'notMapping' }
  | { code: 'notANumber'; path: string }
  | { code: 'noSweep' }
  | { code: 'sweepNotMapping' }
  | { code: 'unknownField'; field: string }
  | { code: 'noName' }
  | { code: 'badMethod'; method: string }
  | { code: 'noParameters' }
  | { code: 'badParameter'; parameter: string }
  | { code: 'randomNoTrials' }
  | { code: 'badTrials' }
  | { code: 'gridTrials'; size: number }
  | { code: 'gridRange'; parameter: string }
  | { code: 'badEarlyStop'; value: string }
  | { code: 'badStopAfterStep' }
  | { code: 'badStopMinTrials' }
  | { code: 'badReductionFactor' }
  | { code: 'badStartupTrials' }
  | { code: 'tpeNoMetric' }
  | { code: 'tpeTrials'; size: number }
  | { code: 'ashaNoFirstRung' }
  | { code: 'earlyStopNoMetric'; rule: string }
  | { code: 'badRankBy'; value: string }
  | { code: 'badBrackets' }
  | { code: 'bracketsNotAsha' }
  | { code: 'setBySweep'; field: string }
  | { code: 'notText'; path: string }
  | { code: 'unknownPlaceholder'; field: string; names: string }
  | PoolMiss;

/** One parameter as the preview shows it: its values, or the [low, high] of a range. */
export interface ParameterSummary {
  name: string;
  kind: ParameterKind;
  values: unknown[];
}

/** What the preview shows of the sweep and its template. */
export interface SweepSummary {
  name: string;
  method: SweepMethod;
  /** How many trials it runs: a grid's every combination, or a random search's `trials`. */
  trials: number;
  parameters: ParameterSummary[];
  parallel: unknown;
  seed: unknown;
  metric: unknown;
  goal: unknown;
  /** Which of a trial's values ranks it: its newest, or its best over its steps. */
  rankBy: RankBy;
  earlyStop: EarlyStopRule;
  stopAfterStep: number;
  stopMinTrials: number;
  reductionFactor: number;
  /** Successive halving's brackets side by side (Hyperband); 1: one. */
  brackets: number;
  /** A tpe sweep's first trials, drawn at random before the sampler models the results. */
  startupTrials: number;
  /** The project the file names (sweep.project, else the template's); undefined if none. */
  project: number | undefined;
  /** The template's pool id; undefined where it gives none. */
  pool: number | undefined;
  image: unknown;
  acceleratorModel: unknown;
  devices: PipelineStepSummary['devices'];
  /** Parameters that set a replica group's size (`"{{gpus}}"`): each trial's differs. */
  sizedBy: string[];
  command: unknown;
  args: unknown;
}

/** The sweep as sent to POST sweeps/: its fields as written, and the template. */
export type SweepBody = Mapping & { name: string; parameters: Mapping; template: Mapping };

export type SweepFile =
  { ok: true; body: SweepBody; summary: SweepSummary } | { ok: false; problems: SweepProblem[] };

/** A parameter's kind and values, or null where its spec is none the API knows: a list of
 * values, or a mapping of one kind to its list (apps/sweeps/space.py `parse_parameter`). The
 * values themselves are the server's to check. */
function parameterOf(name: string, spec: unknown): ParameterSummary | null {
  if (Array.isArray(spec)) return { name, kind: 'values', values: spec };
  if (!isMapping(spec)) return null;
  const entries = Object.entries(spec);
  const [only] = entries;
  if (entries.length !== 1 || only === undefined) return null;
  const [kind, body] = only;
  if (!KINDS.includes(kind) || !Array.isArray(body)) return null;
  if (kind !== 'values' && body.length !== 2) return null;
  return { name, kind: kind as ParameterKind, values: body };
}

/** The template's texts a placeholder may stand in (command and args items, env values),
 * each with where it is, as the server fills them in (apps/sweeps/space.py `_texts`). */
function templateTexts(template: Mapping): { field: string; path: string; text: unknown }[] {
  const out: { field: string; path: string; text: unknown }[] = [];
  for (const field of ['command', 'args']) {
    const items = template[field];
    if (Array.isArray(items)) {
      items.forEach((text: unknown, i) => out.push({ field, path: `${field}[${i}]`, text }));
    }
  }
  const { env } = template;
  if (isMapping(env)) {
    for (const [key, text] of Object.entries(env))
      out.push({ field: 'env', path: `env.${key}`, text });
  }
  return out;
}

/** A replica group's fields a parameter may set, as `"{{name}}"` alone (apps/sweeps/space.py
 * RESOURCE_FIELDS): the trial's value itself, not text. */
const RESOURCE_FIELDS = [
  'replicas',
  'accelerators',
  'accelerator_milli',
  'cpu_milli',
  'memory_mib',
  'rdma_nics',
] as const;

/** The parameters named in the replica groups' resource fields (a size set by each trial). */
function resourceNames(template: Mapping): string[] {
  const groups = template.replica_groups;
  if (!Array.isArray(groups)) return [];
  const names = new Set<string>();
  for (const group of groups) {
    if (!isMapping(group)) continue;
    for (const field of RESOURCE_FIELDS) {
      const text = group[field];
      if (typeof text !== 'string') continue;
      for (const [, name = ''] of text.matchAll(PLACEHOLDER)) names.add(name);
    }
  }
  return [...names].sort();
}

/** Problems with the template's placeholders: an item that is not text (in YAML an unquoted
 * `{{lr}}` is a mapping), and names no parameter has. */
function placeholderProblems(template: Mapping, names: Set<string> | null): SweepProblem[] {
  const problems: SweepProblem[] = [];
  const unknown = new Map<string, Set<string>>();
  for (const { field, path, text } of templateTexts(template)) {
    if (typeof text !== 'string') {
      problems.push({ code: 'notText', path });
      continue;
    }
    if (names === null) continue;
    for (const [, name = ''] of text.matchAll(PLACEHOLDER)) {
      if (!names.has(name)) unknown.set(field, (unknown.get(field) ?? new Set()).add(name));
    }
  }
  if (names !== null) {
    const missing = resourceNames(template).filter((name) => !names.has(name));
    if (missing.length) unknown.set('replica_groups', new Set(missing));
  }
  for (const [field, missing] of unknown) {
    problems.push({ code: 'unknownPlaceholder', field, names: [...missing].sort().join(', ') });
  }
  return problems;
}

/** `trials` (and `stop_min_trials`) as the server reads it: a whole number from 1. */
function isCount(value: unknown): value is number {
  return isInteger(value) && value >= 1;
}

/**
 * The sweep in a sweep file, ready to POST to sweeps/, or every problem found in it. `pools`
 * is the pools list (GET /api/v1/pools/), for a pool given by name.
 */
export function readSweepFile(text: string, pools: readonly Pool[], fileName = ''): SweepFile {
  const read = readDocument(text, fileName);
  if (!read.ok) return { ok: false, problems: [read.problem] };
  const { doc } = read;
  if (!isMapping(doc)) return { ok: false, problems: [{ code: 'notMapping' }] };
  if (!(SWEEP in doc)) return { ok: false, problems: [{ code: 'noSweep' }] };
  const bad = notNumbers(doc, '');
  if (bad.length) {
    return { ok: false, problems: bad.map((path) => ({ code: 'notANumber' as const, path })) };
  }
  const { [SWEEP]: sweep, ...template } = doc;
  if (!isMapping(sweep)) return { ok: false, problems: [{ code: 'sweepNotMapping' }] };

  const problems: SweepProblem[] = [];
  const known: readonly string[] = SWEEP_FIELDS;
  for (const field of Object.keys(sweep)) {
    if (!known.includes(field)) problems.push({ code: 'unknownField', field });
  }
  const { name, method = 'random', trials, parameters } = sweep;
  if (typeof name !== 'string' || name === '') problems.push({ code: 'noName' });
  if (typeof method !== 'string' || !METHODS.includes(method)) {
    problems.push({ code: 'badMethod', method: JSON.stringify(method) });
  }

  let params: ParameterSummary[] | null = null;
  if (!isMapping(parameters) || Object.keys(parameters).length === 0) {
    problems.push({ code: 'noParameters' });
  } else {
    params = [];
    for (const [key, spec] of Object.entries(parameters)) {
      const param = parameterOf(key, spec);
      if (param === null) problems.push({ code: 'badParameter', parameter: key });
      else params.push(param);
    }
  }

  let count = 0;
  const { startup_trials: startupTrials = DEFAULT_STARTUP_TRIALS } = sweep;
  if (!isCount(startupTrials)) problems.push({ code: 'badStartupTrials' });
  if (method === 'random' || method === 'tpe') {
    if (trials === undefined || trials === null) problems.push({ code: 'randomNoTrials' });
    else if (!isCount(trials)) problems.push({ code: 'badTrials' });
    else count = trials;
  }
  if (method === 'tpe') {
    // It models the results by the metric, after its random startup (apps/sweeps/api).
    if (!sweep.metric) problems.push({ code: 'tpeNoMetric' });
    if (count && isCount(startupTrials) && count <= startupTrials) {
      problems.push({ code: 'tpeTrials', size: startupTrials });
    }
  } else if (method === 'grid' && params !== null) {
    const ranges = params.filter((p) => p.kind !== 'values');
    for (const p of ranges) problems.push({ code: 'gridRange', parameter: p.name });
    if (ranges.length === 0) {
      count = params.reduce((product, p) => product * p.values.length, 1);
      // The server takes the grid's own size, and refuses any other.
      if (trials !== undefined && trials !== null && trials !== count) {
        problems.push({ code: 'gridTrials', size: count });
      }
    }
  }

  const {
    early_stop: earlyStop = 'none',
    stop_after_step: stopAfterStep = DEFAULT_STOP_AFTER_STEP,
    stop_min_trials: stopMinTrials = DEFAULT_STOP_MIN_TRIALS,
    reduction_factor: reductionFactor = DEFAULT_REDUCTION_FACTOR,
    brackets = 1,
  } = sweep;
  if (typeof earlyStop !== 'string' || !RULES.includes(earlyStop)) {
    problems.push({ code: 'badEarlyStop', value: JSON.stringify(earlyStop) });
  }
  if (!isInteger(stopAfterStep) || stopAfterStep < 0) problems.push({ code: 'badStopAfterStep' });
  else if (earlyStop === 'asha' && stopAfterStep < 1) problems.push({ code: 'ashaNoFirstRung' });
  if (!isCount(stopMinTrials)) problems.push({ code: 'badStopMinTrials' });
  if (
    !isInteger(reductionFactor) ||
    reductionFactor < REDUCTION_FACTOR_MIN ||
    reductionFactor > REDUCTION_FACTOR_MAX
  ) {
    problems.push({ code: 'badReductionFactor' });
  }
  if (!isInteger(brackets) || brackets < 1 || brackets > BRACKETS_MAX) {
    problems.push({ code: 'badBrackets' });
  } else if (brackets > 1 && earlyStop !== 'asha') {
    problems.push({ code: 'bracketsNotAsha' });
  }
  // Either rule compares the trials' values of the metric (apps/sweeps/stopping.py).
  if ((earlyStop === 'median' || earlyStop === 'asha') && !sweep.metric) {
    problems.push({ code: 'earlyStopNoMetric', rule: earlyStop });
  }

  const { rank_by: rankBy = 'last' } = sweep;
  if (typeof rankBy !== 'string' || !RANK_BY.includes(rankBy)) {
    problems.push({ code: 'badRankBy', value: JSON.stringify(rankBy) });
  }

  for (const field of SET_BY_SWEEP) {
    if (field in template) problems.push({ code: 'setBySweep', field });
  }
  const names = params === null ? null : new Set(Object.keys(parameters as Mapping));
  problems.push(...placeholderProblems(template, names));
  if ('pool' in template) {
    const pool = resolvePool(template.pool, pools);
    if (pool.ok) template.pool = pool.pool;
    else problems.push(pool.problem);
  }

  if (problems.length || params === null || typeof name !== 'string') {
    return { ok: false, problems };
  }
  return {
    ok: true,
    body: { ...sweep, name, parameters: parameters as Mapping, template },
    summary: {
      name,
      method: method as SweepMethod,
      trials: count,
      parameters: params,
      parallel: sweep.parallel ?? DEFAULT_PARALLEL,
      seed: sweep.seed,
      metric: sweep.metric,
      goal: sweep.goal ?? 'min',
      rankBy: rankBy as RankBy,
      earlyStop: earlyStop as EarlyStopRule,
      stopAfterStep: stopAfterStep as number,
      stopMinTrials: stopMinTrials as number,
      reductionFactor: reductionFactor as number,
      brackets: brackets as number,
      startupTrials: startupTrials as number,
      project: isInteger(sweep.project)
        ? sweep.project
        : isInteger(template.project)
          ? template.project
          : undefined,
      pool: isInteger(template.pool) ? template.pool : undefined,
      image: template.image,
      acceleratorModel: template.accelerator_model,
      devices: devicesOf(template.replica_groups),
      sizedBy: resourceNames(template),
      command: template.command,
      args: template.args,
    },
  };
}

/**
 * A refused sweep's errors (ApiError.errors, flattened: `parameters.lr`, `template.image`,
 * `template.replica_groups.0.accelerators`...), split by where the page shows them: each
 * parameter's with it, the template's (as `field: message`) with the template, and the sweep's
 * own (as `field: message`) at the top.
 */
export function sweepErrors(
  errors: Record<string, string[]>,
  parameters: readonly string[],
): { byParameter: Map<string, string[]>; template: string[]; general: string[] } {
  const byParameter = new Map<string, string[]>();
  const template: string[] = [];
  const general: string[] = [];
  const said = (field: string, messages: string[]) =>
    messages.map((m) => (field === '' || field === 'non_field_errors' ? m : `${field}: ${m}`));
  for (const [key, messages] of Object.entries(errors)) {
    const param = /^parameters\.(.+)$/.exec(key)?.[1];
    if (param !== undefined && parameters.includes(param)) {
      byParameter.set(param, [...(byParameter.get(param) ?? []), ...messages]);
    } else if (key === 'template' || key.startsWith('template.')) {
      template.push(...said(fieldPath(key.slice('template.'.length)), messages));
    } else {
      general.push(...said(fieldPath(key), messages));
    }
  }
  return { byParameter, template, general };
}
