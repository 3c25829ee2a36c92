import { Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import type { JobState } from '../lib/apiTypes';

const COLORS: Record<JobState, string> = {
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

export function JobStateTag({ state }: { state: JobState }) {
  const { t } = useTranslation();
  return (
    <Tag color={COLORS[state]} data-testid="job-state" data-state={state}>
      {t(`jobState.${state}`)}
    </Tag>
  );
}
