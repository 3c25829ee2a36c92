import type { JobState } from './apiTypes';

/** States in which a job holds or waits for resources (cancel/stop make sense). */
export const ACTIVE_STATES: JobState[] = [
  'submitted',
  'queued',
  'admitted',
  'dispatching',
  'running',
  'preempted',
  'restarting',
];
