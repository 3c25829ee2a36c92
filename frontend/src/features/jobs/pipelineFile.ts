import { isAlias, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import type { Pool } from '../../lib/apiTypes';

/**
 * A pipeline file, as `zs submit -f pipeline.yaml` takes it (sdk/zhisuan/cli.py `_steps`): a
 * YAML or JSON mapping whose `pipeline` is a list of steps, each a job body as for POST jobs/;
 * the fields beside `pipeline` are every step's defaults (a step's own fields win), and a
 * step's `after` names earlier steps (by name) or existing jobs (by id). Checked here as the
 * CLI checks it before sending; the server checks the rest of each step.
 */

/** The key of the steps in a pipeline file. */
export const PIPELINE = 'pipeline';

/** Fields whose items (command, args) or values (env) keep their text as written
 * (sdk/zhisuan/_yaml.py TEXT_ITEMS and TEXT_VALUES). */
const TEXT_ITEMS = new Set(['command', 'args']);
const TEXT_VALUES = new Set(['env']);

/** What is wrong with a file, for the page to say in the reader's language. `step` is the
 * step's number (from 1), `name` its name where it has one. */
export type PipelineProblem =
  | DocumentProblem
  | { code: 'notMapping' }
  | { code: 'noPipeline' }
  | { code: 'pipelineNotList' }
  | { code: 'pipelineEmpty' }
  | { code: 'notANumber'; path: string }
  | { code: 'stepNotMapping'; step: number }
  | { code: 'noName'; step: number }
  | { code: 'duplicateName'; step: number; name: string }
  | { code: 'afterNotList'; step: number; name: string }
  | { code: 'afterNotEarlier'; step: number; name: string; ref: string }
  | { code: 'afterBadRef'; step: number; name: string; ref: string }
  | PoolProblem;

/** Why a file's text is no document at all (a sweep file's too). */
export type DocumentProblem =
  { code: 'empty' } | { code: 'yaml'; message: string } | { code: 'json'; message: string };

/** A pool the pools list does not resolve. */
export type PoolMiss =
  | { code: 'poolUnknown'; pool: string; pools: string }
  | { code: 'poolInClusters'; pool: string; clusters: string; example: string }
  | { code: 'poolAmbiguous'; pool: string; ids: string };

/** Said of a step, or without `step` of the defaults' pool (that of every step that gives
 * none of its own). */
export type PoolProblem = PoolMiss & { step?: number; name?: string };

/** One step as sent: a job body (the server checks its fields). */
export type PipelineStepBody = Record<string, unknown> & { name: string; kind: unknown };

/** What the preview shows of a step. */
export interface PipelineStepSummary {
  /** Its place in the file, from 0 (the server's key for its errors). */
  index: number;
  name: string;
  /** The pool's id; undefined where the step gives none. */
  pool: number | undefined;
  acceleratorModel: string | undefined;
  /** Whole accelerators and thousandths of one, over its replica groups; undefined where
   * its replica groups are not a list of numbers the preview can add up. */
  devices: { whole: number; milli: number } | undefined;
  /** The indexes of the earlier steps it starts after. */
  afterSteps: number[];
  /** The ids of existing jobs it starts after. */
  afterJobs: number[];
}

export type PipelineFile =
  | { ok: true; body: { steps: PipelineStepBody[] }; steps: PipelineStepSummary[] }
  | { ok: false; problems: PipelineProblem[] };

export type Mapping = Record<string, unknown>;

export function isMapping(value: unknown): value is Mapping {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The text of an uploaded file, read as UTF-8 (a byte-order mark dropped); null if it is not
 * (the pipeline and sweep pages' uploads). */
export async function readText(file: Blob): Promise<string | null> {
  const bytes = await new Promise<ArrayBuffer>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      resolve(reader.result as ArrayBuffer);
    };
    reader.onerror = () => {
      reject(reader.error ?? new Error('not read'));
    };
    reader.readAsArrayBuffer(file);
  });
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Reads the file's text (YAML, or JSON as the CLI tells them apart) into its document, or the
 * problem that stops it. A byte-order mark is dropped. */
export function readDocument(
  text: string,
  fileName = '',
): { ok: true; doc: unknown } | { ok: false; problem: DocumentProblem } {
  const source = text.replace(/^\uFEFF/, '');
  if (source.trim() === '') return { ok: false, problem: { code: 'empty' } };
  if (fileName.toLowerCase().endsWith('.json') || source.trimStart().startsWith('{')) {
    try {
      return { ok: true, doc: JSON.parse(source) as unknown };
    } catch (error) {
      return {
        ok: false,
        problem: { code: 'json', message: error instanceof Error ? error.message : String(error) },
      };
    }
  }
  // YAML 1.2 (the core schema: `yes`, `on` and `no` are text, not booleans), with `<<` merge
  // keys as PyYAML reads them. Warnings are not logged: the one YAML gives here is of a
  // mapping as a key (an unquoted `{{lr}}`), a value the sweep page reports and the server
  // refuses, not the console's business.
  const document = parseDocument(source, { version: '1.2', merge: true, logLevel: 'error' });
  const [error] = document.errors;
  if (error !== undefined) {
    // "<what> at line L, column C:" and then the lines around it: the first line says it.
    const message = (error.message.split('\n')[0] ?? error.message).replace(/:$/, '');
    return { ok: false, problem: { code: 'yaml', message } };
  }
  keepText(document, document.contents);
  return { ok: true, doc: document.toJS() as unknown };
}

/** Scalars of TEXT_ITEMS / TEXT_VALUES as written (`007`, `1e-3`, `on`, `~`), in the file's
 * top level and in each step (sdk/zhisuan/_yaml.py `_keep_text`). */
function keepText(document: Document, node: unknown): void {
  const resolved = isAlias(node) ? node.resolve(document) : node;
  if (!isMap(resolved)) return;
  for (const pair of resolved.items) {
    if (!isScalar(pair.key)) continue;
    const key = pair.key.value;
    const value = isAlias(pair.value) ? pair.value.resolve(document) : pair.value;
    let items: unknown[] = [];
    if (key === PIPELINE && isSeq(value)) {
      for (const step of value.items) keepText(document, step);
      continue;
    } else if (typeof key === 'string' && TEXT_ITEMS.has(key) && isSeq(value)) {
      items = value.items;
    } else if (typeof key === 'string' && TEXT_VALUES.has(key) && isMap(value)) {
      items = value.items.map((item) => item.value);
    }
    for (const item of items) {
      if (isScalar(item) && typeof item.value !== 'string') {
        item.value = item.source ?? String(item.value);
      }
    }
  }
}

/** Numbers JSON cannot carry (`.nan`, `.inf`): where they are, as the CLI names them. */
export function notNumbers(value: unknown, path: string): string[] {
  if (typeof value === 'number') return Number.isFinite(value) ? [] : [path || 'the document'];
  if (Array.isArray(value)) return value.flatMap((v, i) => notNumbers(v, `${path}[${i}]`));
  if (isMapping(value)) {
    return Object.entries(value).flatMap(([k, v]) => notNumbers(v, path ? `${path}.${k}` : k));
  }
  return [];
}

/** The pool as the lists show it: `cluster/name` where another cluster has a pool so named. */
export function poolRef(pool: Pick<Pool, 'name' | 'cluster'>, pools: readonly Pool[]): string {
  const same = pools.filter((p) => p.name === pool.name).length;
  return same > 1 ? `${pool.cluster}/${pool.name}` : pool.name;
}

type PoolAnswer = { ok: true; pool: unknown } | { ok: false; problem: PoolMiss };

/**
 * A step's `pool` as the API wants it (sdk/zhisuan/cli.py `_resolve_pool`): an id as it is
 * (digits as a number), a name or `cluster/name` looked up in the pools list.
 */
export function resolvePool(pool: unknown, pools: readonly Pool[]): PoolAnswer {
  if (typeof pool !== 'string') return { ok: true, pool };
  if (/^\s*\d+\s*$/.test(pool)) return { ok: true, pool: Number(pool.trim()) };
  const slash = pool.lastIndexOf('/');
  const cluster = slash >= 0 ? pool.slice(0, slash) : undefined;
  const name = pool.slice(slash + 1);
  const found = pools.filter(
    (p) => p.name === name && (cluster === undefined || p.cluster === cluster),
  );
  const [only] = found;
  if (found.length === 1 && only !== undefined) return { ok: true, pool: only.id };
  if (found.length > 1) {
    const clusters = [...new Set(found.map((p) => p.cluster))].sort();
    if (clusters.length > 1) {
      return {
        ok: false,
        problem: {
          code: 'poolInClusters',
          pool,
          clusters: clusters.join(', '),
          example: `${clusters[0] ?? ''}/${name}`,
        },
      };
    }
    return {
      ok: false,
      problem: { code: 'poolAmbiguous', pool, ids: found.map((p) => p.id).join(', ') },
    };
  }
  const names = pools.map((p) => poolRef(p, pools)).sort();
  return {
    ok: false,
    problem: { code: 'poolUnknown', pool, pools: names.length ? names.join(', ') : '—' },
  };
}

export function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

/** Accelerators over a step's replica groups (a group's replicas default to 1, its
 * accelerators and thousandths to 0, as the API's). */
export function devicesOf(groups: unknown): PipelineStepSummary['devices'] {
  if (!Array.isArray(groups)) return undefined;
  let whole = 0;
  let milli = 0;
  for (const group of groups) {
    if (!isMapping(group)) return undefined;
    const { replicas = 1, accelerators = 0, accelerator_milli: share = 0 } = group;
    if (typeof replicas !== 'number' || typeof accelerators !== 'number') return undefined;
    if (typeof share !== 'number') return undefined;
    whole += replicas * accelerators;
    milli += replicas * share;
  }
  return { whole, milli };
}

/**
 * The steps of a pipeline file, ready to POST to jobs/pipeline/, or every problem found in it.
 * `pools` is the pools list (GET /api/v1/pools/), for pools given by name.
 */
export function readPipelineFile(
  text: string,
  pools: readonly Pool[],
  fileName = '',
): PipelineFile {
  const read = readDocument(text, fileName);
  if (!read.ok) return { ok: false, problems: [read.problem] };
  const { doc } = read;
  if (!isMapping(doc)) return { ok: false, problems: [{ code: 'notMapping' }] };
  if (!(PIPELINE in doc)) return { ok: false, problems: [{ code: 'noPipeline' }] };
  const bad = notNumbers(doc, '');
  if (bad.length) {
    return { ok: false, problems: bad.map((path) => ({ code: 'notANumber' as const, path })) };
  }
  const { [PIPELINE]: raw, ...defaults } = doc;
  if (!Array.isArray(raw)) return { ok: false, problems: [{ code: 'pipelineNotList' }] };
  if (raw.length === 0) return { ok: false, problems: [{ code: 'pipelineEmpty' }] };

  const problems: PipelineProblem[] = [];
  // The defaults' pool is looked up once, and a problem with it said once.
  const defaultPool = 'pool' in defaults ? resolvePool(defaults.pool, pools) : undefined;
  if (defaultPool !== undefined && !defaultPool.ok) problems.push(defaultPool.problem);

  const steps: PipelineStepBody[] = [];
  const summaries: PipelineStepSummary[] = [];
  const seen = new Map<string, number>();
  raw.forEach((item: unknown, index) => {
    const step = index + 1;
    if (!isMapping(item)) {
      problems.push({ code: 'stepNotMapping', step });
      return;
    }
    const merged: Mapping = { ...defaults, ...item };
    const { name } = merged;
    if (typeof name !== 'string' || name === '') {
      problems.push({ code: 'noName', step });
      return;
    }
    if (seen.has(name)) problems.push({ code: 'duplicateName', step, name });
    const after = merged.after ?? [];
    const afterSteps: number[] = [];
    const afterJobs: number[] = [];
    if (!Array.isArray(after)) {
      problems.push({ code: 'afterNotList', step, name });
    } else {
      for (const ref of after as unknown[]) {
        if (typeof ref === 'string') {
          const earlier = seen.get(ref);
          if (earlier === undefined) problems.push({ code: 'afterNotEarlier', step, name, ref });
          else afterSteps.push(earlier);
        } else if (isInteger(ref)) {
          afterJobs.push(ref);
        } else {
          problems.push({ code: 'afterBadRef', step, name, ref: JSON.stringify(ref) });
        }
      }
    }
    if (!seen.has(name)) seen.set(name, index);

    if ('pool' in item) {
      const own = resolvePool(item.pool, pools);
      if (own.ok) merged.pool = own.pool;
      else problems.push({ ...own.problem, step, name });
    } else if (defaultPool?.ok) {
      merged.pool = defaultPool.pool;
    }
    // `kind` training unless given, as the CLI and the API default it.
    const body: PipelineStepBody = {
      ...merged,
      name,
      kind: 'kind' in merged ? merged.kind : 'training',
    };
    steps.push(body);
    summaries.push({
      index,
      name,
      pool: isInteger(body.pool) ? body.pool : undefined,
      acceleratorModel:
        typeof body.accelerator_model === 'string' ? body.accelerator_model : undefined,
      devices: devicesOf(body.replica_groups),
      afterSteps,
      afterJobs,
    });
  });
  if (problems.length) return { ok: false, problems };
  return { ok: true, body: { steps }, steps: summaries };
}

/** A nested field as the CLI says it: `replica_groups.0.gpus` as `replica_groups[0].gpus`. */
export function fieldPath(key: string): string {
  return key.replace(/\.(\d+)(?=\.|$)/g, '[$1]');
}

/**
 * A refused pipeline's errors (ApiError.errors: `steps.<index>.<field>` for a step's, `steps`
 * for the request's), split by step: each step's as `field: message`, the rest for the top.
 */
export function stepErrors(
  errors: Record<string, string[]>,
  count: number,
): { byStep: Map<number, string[]>; general: string[] } {
  const byStep = new Map<number, string[]>();
  const general: string[] = [];
  for (const [key, messages] of Object.entries(errors)) {
    const found = /^steps\.(\d+)(?:\.(.+))?$/.exec(key);
    const index = Number(found?.[1]);
    if (found !== null && index < count) {
      const field = found[2] === undefined || found[2] === 'non_field_errors' ? '' : found[2];
      const said = messages.map((m) => (field ? `${fieldPath(field)}: ${m}` : m));
      byStep.set(index, [...(byStep.get(index) ?? []), ...said]);
    } else if (key === 'steps' || key === 'non_field_errors') {
      general.push(...messages);
    } else {
      general.push(...messages.map((m) => `${fieldPath(key)}: ${m}`));
    }
  }
  return { byStep, general };
}
