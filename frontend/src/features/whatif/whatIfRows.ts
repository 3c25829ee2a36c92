import type { TFunction } from 'i18next';
import type { WhatIfResult, WhatIfRun } from '../../lib/apiTypes';
import { formatDuration, formatShare } from '../../lib/format';
import type { Language } from '../../lib/i18n';

export interface ResultRow {
  key: string;
  measure: string;
  /** One cell per policy, in the result's order. */
  cells: string[];
  /** As it happened, where the history says (allocation, late jobs, queueing delays). */
  actual?: string;
}

type Wait = WhatIfResult['actual_waits'][string];

export const POLICIES = ['ours', 'standard', 'volcano', 'best-fit', 'fifo-spread'] as const;
type Policy = (typeof POLICIES)[number];

/** The policy's name in the current language (an unknown one as the server sent it). */
export function policyLabel(t: TFunction, policy: string): string {
  return (POLICIES as readonly string[]).includes(policy)
    ? t(`whatif.policy.${policy as Policy}`)
    : policy;
}

function wait(w: Wait | undefined, language: Language): string {
  return w ? `${formatDuration(w.mean_s, language)} / ${formatDuration(w.p95_s, language)}` : '—';
}

const SIZE_ORDER = ['cpu', '<1', '1', '2-8', '9-64', '65-255', '>=256'];

/** The accelerators of the cluster as it was: the replayed ones less what was added. */
function realAccelerators(result: WhatIfResult): number {
  const changed = (result.capacity_changes ?? []).reduce((n, c) => n + c.accelerators, 0);
  return result.accelerators - changed;
}

/** The measures of a replay as table rows, policies side by side. */
export function resultRows(t: TFunction, result: WhatIfResult, language: Language): ResultRow[] {
  const ps = result.policies;
  const share = ([inside = 0, all = 0]: number[]) =>
    all ? `${formatShare(inside, all, language)} (${inside}/${all})` : '—';
  const rows: ResultRow[] = [
    {
      key: 'allocation',
      measure: t('whatif.m.allocation'),
      cells: ps.map((p) => formatShare(p.allocation, 1, language)),
      actual:
        result.actual_allocation === undefined
          ? '—'
          : formatShare(result.actual_allocation, 1, language),
    },
    {
      // The same in GPUs: with pools grown or shrunk the shares are of different clusters,
      // so this is the row that compares them (as it happened: on the cluster as it was).
      key: 'in-use',
      measure: t('whatif.m.inUse'),
      // Runs stored before it was measured: the share times the cluster's GPUs.
      cells: ps.map((p) =>
        (p.mean_allocated_gpus ?? p.allocation * result.accelerators).toFixed(1),
      ),
      actual:
        result.actual_allocation === undefined
          ? '—'
          : (result.actual_allocation * realAccelerators(result)).toFixed(1),
    },
    {
      key: 'fragmented',
      measure: t('whatif.m.fragmented'),
      cells: ps.map((p) => p.mean_fragmented_gpus.toFixed(0)),
    },
    { key: 'leaf', measure: t('whatif.m.leaf'), cells: ps.map((p) => share(p.one_leaf)) },
    { key: 'su', measure: t('whatif.m.su'), cells: ps.map((p) => share(p.one_su)) },
    {
      key: 'preemptions',
      measure: t('whatif.m.preemptions'),
      cells: ps.map((p) => `${p.preemptions} / ${p.preempted_gpu_hours.toFixed(0)}`),
    },
    {
      key: 'late',
      measure: t('whatif.m.late'),
      cells: ps.map((p) => String(p.late_jobs)),
      actual: result.actual_late_jobs === undefined ? '—' : String(result.actual_late_jobs),
    },
    // Every replayed job really started (those that never did are left out), so as it
    // happened this is 0. Runs stored before it was counted have no row.
    ...(ps.some((p) => p.not_started !== undefined)
      ? [
          {
            key: 'not-started',
            measure: t('whatif.m.notStarted'),
            cells: ps.map((p) => (p.not_started === undefined ? '—' : String(p.not_started))),
            actual: '0',
          },
        ]
      : []),
    {
      key: 'large',
      measure: t('whatif.m.large'),
      cells: ps.map((p) => `${p.large_over_2x}/${p.large_checked}`),
    },
  ];
  // One row per tenant: the GPUs it held on average (share of its guarantee), and how
  // much of the time it had jobs waiting it held under 90% of its guarantee.
  const tenants = new Map<string, number>();
  for (const p of ps) for (const u of p.tenants ?? []) tenants.set(u.tenant, u.guarantee_gpus);
  for (const name of Object.keys(result.actual_tenant_use ?? {})) {
    if (!tenants.has(name)) tenants.set(name, 0);
  }
  const used = (gpus: number, guarantee: number) =>
    guarantee ? `${gpus.toFixed(1)} (${formatShare(gpus, guarantee, language)})` : gpus.toFixed(1);
  for (const [name, guarantee] of [...tenants].sort(([a], [b]) => a.localeCompare(b))) {
    const real = result.actual_tenant_use?.[name];
    rows.push({
      key: `tenant-${name}`,
      measure: t('whatif.m.tenant', { tenant: name, gpus: guarantee.toFixed(0) }),
      cells: ps.map((p) => {
        const u = p.tenants?.find((x) => x.tenant === name);
        return u
          ? t('whatif.m.tenantCell', {
              used: used(u.mean_used_gpus, guarantee),
              short: formatShare(u.short_when_demanding, 1, language),
            })
          : '—';
      }),
      actual: real === undefined ? '—' : used(real, guarantee),
    });
  }
  const sizes = new Set([
    ...Object.keys(result.actual_waits),
    ...ps.flatMap((p) => Object.keys(p.waits)),
  ]);
  for (const size of SIZE_ORDER.filter((s) => sizes.has(s))) {
    rows.push({
      key: `wait-${size}`,
      measure: t('whatif.m.wait', { size }),
      cells: ps.map((p) => wait(p.waits[size], language)),
      actual: wait(result.actual_waits[size], language),
    });
  }
  return rows;
}

export function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n);
}

/**
 * "sim-a800/a800-train +4, quotas changed: 1, work ×1.3, no outages"; "—" for the cluster as
 * it is.
 */
export function changesSummary(
  t: TFunction,
  run: WhatIfRun,
  poolNames: Map<number, string>,
): string {
  const parts = (run.node_changes ?? []).map(
    (c) => `${poolNames.get(c.pool) ?? `#${c.pool}`} ${signed(c.nodes)}`,
  );
  const quotas = run.quota_changes?.length ?? 0;
  if (quotas) parts.push(t('whatif.quotaCount', { count: quotas }));
  if (run.load_factor !== 1) {
    parts.push(t('whatif.loadSummary', { factor: run.load_factor }));
  }
  if (!run.replay_faults) parts.push(t('whatif.noFaultsSummary'));
  for (const m of run.maintenance ?? []) {
    parts.push(t('whatif.maintenanceSummary', { nodes: m.nodes, start: m.start_h }));
  }
  return parts.join(', ') || '—';
}

export interface Band {
  start_h: number;
  end_h: number;
}

/**
 * The window's outages as the bands a chart shades: overlapping or touching spans (several
 * nodes out at once) join, so a week of many outages stays readable.
 */
export function outageBands(spans: readonly Band[]): Band[] {
  const bands: Band[] = [];
  for (const s of [...spans].sort((a, b) => a.start_h - b.start_h)) {
    const last = bands.at(-1);
    if (last && s.start_h <= last.end_h) last.end_h = Math.max(last.end_h, s.end_h);
    else bands.push({ start_h: s.start_h, end_h: s.end_h });
  }
  return bands;
}

/** The policies that every run replayed, in the first run's order. */
export function commonPolicies(runs: WhatIfRun[]): string[] {
  const [first, ...rest] = runs.map((r) => (r.result?.policies ?? []).map((p) => p.policy));
  return (first ?? []).filter((p) => rest.every((names) => names.includes(p)));
}

export interface CompareRow {
  key: string;
  measure: string;
  /** One cell per run, in the order given. */
  cells: string[];
}

/**
 * Finished runs side by side under one policy: what each changed, its window and cluster,
 * then the measures of the policy's column in each run's table (a row a run lacks: "—").
 * Rows are matched by key, so a tenant or a size class only some runs have still lines up;
 * a tenant's row is named without its guarantee, which a quota change may have set anew
 * (each cell gives the share of the run's own guarantee).
 */
export function compareRows(
  t: TFunction,
  runs: WhatIfRun[],
  policy: string,
  language: Language,
  poolNames: Map<number, string>,
): CompareRow[] {
  const rows: CompareRow[] = [
    {
      key: 'changes',
      measure: t('whatif.changesColumn'),
      cells: runs.map((r) => changesSummary(t, r, poolNames)),
    },
    { key: 'hours', measure: t('whatif.hours'), cells: runs.map((r) => String(r.hours)) },
    {
      key: 'jobs',
      measure: t('whatif.jobs'),
      cells: runs.map((r) => String(r.result?.jobs ?? '—')),
    },
    {
      key: 'cluster',
      measure: t('whatif.cluster'),
      cells: runs.map((r) =>
        r.result
          ? t('whatif.clusterSize', { nodes: r.result.nodes, gpus: r.result.accelerators })
          : '—',
      ),
    },
  ];
  const measures = new Map<string, { measure: string; cells: Map<number, string> }>();
  runs.forEach((run, i) => {
    if (!run.result) return;
    const column = run.result.policies.findIndex((p) => p.policy === policy);
    for (const row of resultRows(t, run.result, language)) {
      const tenant = row.key.startsWith('tenant-') ? row.key.slice('tenant-'.length) : null;
      const entry = measures.get(row.key) ?? {
        measure: tenant ? t('whatif.m.tenantAny', { tenant }) : row.measure,
        cells: new Map<number, string>(),
      };
      entry.cells.set(i, column < 0 ? '—' : (row.cells[column] ?? '—'));
      measures.set(row.key, entry);
    }
  });
  for (const [key, { measure, cells }] of measures) {
    rows.push({ key, measure, cells: runs.map((_, i) => cells.get(i) ?? '—') });
  }
  return rows;
}
