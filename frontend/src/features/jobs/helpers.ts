import type { FormRule } from 'antd';
import type { TFunction } from 'i18next';
import type { Job, JobKind, JobState, Pool } from '../../lib/apiTypes';

export const JOB_STATES: JobState[] = [
  'submitted',
  'queued',
  'admitted',
  'dispatching',
  'running',
  'preempted',
  'restarting',
  'succeeded',
  'failed',
  'cancelled',
];

export const KINDS: JobKind[] = ['training', 'notebook', 'inference'];

/** A job another may start after: a training job that may still succeed (the server refuses
 * a follower of a failed or cancelled job, which never will). */
export function canFollow(job: Pick<Job, 'kind' | 'state'>): boolean {
  return job.kind === 'training' && job.state !== 'failed' && job.state !== 'cancelled';
}

export const PRIORITIES = [0, 1, 2, 3, 4, 5];

export function devicesLabel(job: Pick<Job, 'requested_devices' | 'requested_milli'>): string {
  const whole = job.requested_devices;
  const share = job.requested_milli / 1000;
  if (share > 0 && whole === 0) return `${share}`;
  if (share > 0) return `${whole} + ${share}`;
  return `${whole}`;
}

/** Accelerator models in a pool's capacity, for the model pickers. */
export function modelsOf(
  pool: Pool | undefined,
): { model: string; devices: number; perNode: number }[] {
  return (pool?.capacity ?? []).map((c) => ({
    model: c.model,
    devices: c.devices,
    perNode: c.per_node,
  }));
}

/** Pending codes that mean "not enough (well-placed) free GPUs", where the pool's state helps. */
export const WAITING_ON_GPUS = new Set(['capacity', 'topology', 'reserved', 'held']);

/** The API's rule for job, service and replica group names (they name Kubernetes objects). */
export const NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/;

/** A name field's rules, checked as it is typed rather than by the API at the end. */
export function nameRules(
  t: TFunction,
  requiredMessage: string = t('submit.nameRequired'),
): FormRule[] {
  return [
    { required: true, whitespace: true, message: requiredMessage },
    { pattern: NAME_PATTERN, message: t('submit.namePattern') },
  ];
}

export type Forecast = Pick<Job, 'expected_start_at' | 'expected_start_as_of'>;

/** Under a minute away (or already past): the next scheduling cycles start it. */
export const SOON_MS = 60_000;

/** Seconds from now until ``at`` (ISO 8601), never below zero. */
export function secondsUntil(at: string, now: number = Date.now()): number {
  return Math.max(0, (Date.parse(at) - now) / 1000);
}

/** Seconds from now until the forecast start; null without a forecast start. */
export function secondsUntilStart(job: Forecast, now: number = Date.now()): number | null {
  if (job.expected_start_as_of === null || job.expected_start_at === null) return null;
  return secondsUntil(job.expected_start_at, now);
}

/** A wait said roughly, for the job list: to 5 minutes under an hour, to the hour above. */
export function roughWait(seconds: number): number {
  const step = seconds < 3600 ? 300 : 3600;
  return Math.max(step, Math.round(seconds / step) * step);
}
