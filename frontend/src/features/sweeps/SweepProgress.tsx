import { Progress, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import type { SweepCounts } from '../../lib/apiTypes';
import { COUNT_ORDER, totalOf } from './sweepData';

/** A sweep's trials by state: a bar of those ended (succeeded in green) and, below, the
 * count of each state that has any. */
export function SweepProgress({ counts, testId }: { counts: SweepCounts; testId?: string }) {
  const { t } = useTranslation();
  const total = totalOf(counts);
  const ended = counts.succeeded + counts.failed + counts.cancelled + counts.stopped_early;
  const share = (n: number) => (total === 0 ? 0 : Math.round((n / total) * 100));
  const parts = COUNT_ORDER.filter((key) => counts[key] > 0).map((key) =>
    t(`sweeps.count.${key}`, { count: counts[key] }),
  );
  return (
    <div style={{ minWidth: 160 }} data-testid={testId}>
      <Progress
        size="small"
        showInfo={false}
        percent={share(ended)}
        success={{ percent: share(counts.succeeded) }}
        status={counts.failed > 0 ? 'exception' : 'normal'}
      />
      <Typography.Text type="secondary" style={{ fontSize: 12 }} data-testid="sweep-counts">
        {parts.length > 0 ? parts.join(' · ') : '—'}
      </Typography.Text>
    </div>
  );
}
