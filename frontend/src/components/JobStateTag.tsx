import { Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import type { JobState } from '../lib/apiTypes';
import { JOB_STATE_COLORS } from '../lib/jobStates';

export function JobStateTag({ state }: { state: JobState }) {
  const { t } = useTranslation();
  return (
    <Tag color={JOB_STATE_COLORS[state]} data-testid="job-state" data-state={state}>
      {t(`jobState.${state}`)}
    </Tag>
  );
}
