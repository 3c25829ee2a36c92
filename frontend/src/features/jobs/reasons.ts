import type { TFunction } from 'i18next';

/** The reasons the server records on job events (apps/jobs: `transition`, `record_event`). */
export const JOB_REASONS = [
  'Submitted',
  'Admitted',
  'Dispatched',
  'Running',
  'Succeeded',
  'Preempted',
  'Requeued',
  'Restarting',
  'RetriesExhausted',
  'DispatchFailed',
  'Cancelled',
  'NodeFault',
  'QueueExpired',
  'QueueEscalated',
  'RuntimeLimit',
  'RuntimeLimitSoon',
  'IdleWarning',
  'IdleCheckpoint',
  'IdleStopped',
  'IdleCleared',
  'IdleExtended',
  'IdleExempt',
  'CheckpointRequested',
] as const;

export type JobReason = (typeof JOB_REASONS)[number];

const KNOWN: ReadonlySet<string> = new Set(JOB_REASONS);

function isJobReason(code: string): code is JobReason {
  return KNOWN.has(code);
}

/** The reason's label in the user's language; a code this build does not know, as sent. */
export function reasonLabel(t: TFunction, code: string): string {
  return isJobReason(code) ? t(`jobReason.${code}`) : code;
}
