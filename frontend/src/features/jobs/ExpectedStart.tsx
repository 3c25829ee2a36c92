import { Tooltip, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { formatDateTime, formatDuration, formatMinute } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { roughWait, SOON_MS, secondsUntilStart, type Forecast } from './helpers';

/**
 * The scheduler's forecast of a queued job's start (apps/scheduling/forecast.py), with what
 * it assumes: the work running and queued runs to its declared runtime limits and nothing of
 * higher priority arrives. Nothing before the first forecast.
 */
export function ExpectedStart({ job, compact = false }: { job: Forecast; compact?: boolean }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  if (job.expected_start_as_of === null) return null;
  const hint = t('jobDetail.expectedStartHint', {
    asOf: formatDateTime(job.expected_start_as_of, language),
  });
  const left = secondsUntilStart(job);
  if (compact) {
    if (left === null) return null;
    return (
      <Tooltip title={hint}>
        <Typography.Text type="secondary" data-testid="expected-start-short">
          {'· '}
          {left * 1000 < SOON_MS
            ? t('jobs.expectedStartSoon')
            : t('jobs.expectedStartShort', { wait: formatDuration(roughWait(left), language) })}
        </Typography.Text>
      </Tooltip>
    );
  }
  const at = job.expected_start_at;
  let text: string;
  if (at === null || left === null) text = t('jobDetail.expectedStartNone');
  else if (left * 1000 < SOON_MS) text = t('jobDetail.expectedStartSoon');
  else
    text = t('jobDetail.expectedStart', {
      at: formatMinute(at, language),
      wait: formatDuration(left, language),
    });
  return (
    <Typography.Paragraph style={{ margin: '8px 0 0' }} data-testid="expected-start">
      {text} <Typography.Text type="secondary">{hint}</Typography.Text>
    </Typography.Paragraph>
  );
}
