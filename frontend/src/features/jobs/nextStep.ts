import type { Job } from '../../lib/apiTypes';

/** A replica group as the Submit form edits it (CPU in cores, memory in GiB). */
export interface GroupValues {
  name: string;
  replicas: number;
  accelerators: number;
  cpu: number;
  memory_gib: number;
}

type TopologyMode = 'none' | 'soft' | 'hard';
type TopologyTier = 'leaf' | 'su' | 'spine';

/** What the Submit form takes from the job a next step starts after. */
export interface NextStepValues {
  after: number[];
  pool: number;
  project: number | null;
  image?: string;
  accelerator_model?: string;
  replica_groups?: GroupValues[];
  topology_mode?: TopologyMode;
  topology_tier?: TopologyTier;
}

const MODES: readonly string[] = ['none', 'soft', 'hard'];
const TIERS: readonly string[] = ['leaf', 'su', 'spine'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

// The API's own defaults for what a stored group may leave out (apps/jobs/workload.py).
function groupOf(group: unknown): GroupValues[] {
  if (!isRecord(group) || typeof group.name !== 'string') return [];
  return [
    {
      name: group.name,
      replicas: numberOr(group.replicas, 1),
      accelerators: numberOr(group.accelerators, 0),
      cpu: numberOr(group.cpu_milli, 1000) / 1000,
      memory_gib: numberOr(group.memory_mib, 1024) / 1024,
    },
  ];
}

/**
 * The Submit form's values for a step that starts after `job`: where and on what it ran (pool,
 * project, image, model, replica groups, topology), not what it ran: name and command are the
 * new step's own. What the job's stored spec lacks is left to the form's defaults.
 */
export function nextStepValues(job: Job): NextStepValues {
  const spec = isRecord(job.spec) ? job.spec : {};
  const values: NextStepValues = { after: [job.id], pool: job.pool, project: job.project ?? null };
  if (typeof spec.image === 'string') values.image = spec.image;
  const models: unknown[] = Array.isArray(spec.accelerator_models) ? spec.accelerator_models : [];
  const model = [job.accelerator_model, ...models].find(
    (m): m is string => typeof m === 'string' && m !== '',
  );
  if (model !== undefined) values.accelerator_model = model;
  const groups = Array.isArray(spec.replica_groups) ? spec.replica_groups.flatMap(groupOf) : [];
  if (groups.length > 0) values.replica_groups = groups;
  const topology = isRecord(spec.topology) ? spec.topology : {};
  if (typeof topology.mode === 'string' && MODES.includes(topology.mode)) {
    values.topology_mode = topology.mode as TopologyMode;
  }
  if (typeof topology.highest_tier === 'string' && TIERS.includes(topology.highest_tier)) {
    values.topology_tier = topology.highest_tier as TopologyTier;
  }
  return values;
}
