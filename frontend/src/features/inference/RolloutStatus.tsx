import { Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import type { InferenceService } from '../../lib/apiTypes';
import { currentLanguage } from '../../lib/i18n';
import { schedulerText } from '../jobs/schedulerText';

/**
 * The revision a service runs and, while one rolls out, how far it got: replicas on the new
 * revision, or what it waits for (room for a surge replica), or that it gives the surge room
 * back. Why it waits or has less surge room than `max_surge` is the scheduler's phrases
 * (`rollout_detail`), said like a job's pending reason.
 */
export function RolloutStatus({ service: s }: { service: InferenceService }) {
  const { t } = useTranslation();
  const why = schedulerText(t, currentLanguage(), s.rollout_detail, s.rollout_reason);
  let progress = '';
  let short = '';
  if (s.rollout_state === 'rolling') {
    progress = t('inference.rolloutRolling', {
      updated: s.updated_replicas,
      count: s.desired_replicas,
      revision: s.revision,
      serving: s.serving_revision,
    });
    short = why;
  } else if (s.rollout_state === 'waiting') {
    progress = why ? t('inference.rolloutWaiting', { why }) : t('inference.rolloutWaitingForRoom');
  } else if (s.rollout_state === 'finishing') {
    progress = t('inference.rolloutFinishing');
  } else if (s.rollout_state === 'failed') {
    // Not rolled back (an automatic rollback failed too): a person decides what to serve.
    progress = t('inference.rolloutFailed');
  }
  return (
    <span data-testid="service-revision">
      {t('inference.revisionValue', { n: s.revision })}
      {progress && (
        <Typography.Text
          type={
            s.rollout_state === 'failed'
              ? 'danger'
              : s.rollout_state === 'waiting'
                ? 'warning'
                : 'secondary'
          }
          data-testid="rollout-progress"
        >
          {' · '}
          {progress}
        </Typography.Text>
      )}
      {short && (
        // Less surge room than asked: the rollout goes on, fewer replicas at a time.
        <Typography.Text type="warning" data-testid="rollout-reason">
          {' · '}
          {short}
        </Typography.Text>
      )}
    </span>
  );
}
