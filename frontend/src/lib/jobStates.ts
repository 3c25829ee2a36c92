import type { Job, JobState } from './apiTypes';

/** The antd Tag colours job states use: presets and statuses. */
export type JobStateColor =
  | 'default'
  | 'processing'
  | 'success'
  | 'error'
  | 'gold'
  | 'cyan'
  | 'geekblue'
  | 'orange'
  | 'purple';

/** Each state's Tag colour, for the state tag and whatever else marks a job's state. */
export const JOB_STATE_COLORS: Record<JobState, JobStateColor> = {
  submitted: 'default',
  queued: 'gold',
  admitted: 'cyan',
  dispatching: 'geekblue',
  running: 'processing',
  preempted: 'orange',
  restarting: 'purple',
  succeeded: 'success',
  failed: 'error',
  cancelled: 'default',
};

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

/** States in which a job has ended. */
export const ENDED_STATES: JobState[] = ['succeeded', 'failed', 'cancelled'];

/** An ended notebook whose files (its home volume) are still kept: it may be restarted with
 * them, or they may be deleted. The server deletes them a number of days after the last
 * notebook using them ended. */
export function keepsFiles(job: Job): boolean {
  return (
    job.kind === 'notebook' && ENDED_STATES.includes(job.state) && job.home_deleted_at === null
  );
}
