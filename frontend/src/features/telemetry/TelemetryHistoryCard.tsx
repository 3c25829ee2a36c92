import { Card, Empty, Segmented, Skeleton } from 'antd';
import { useMemo, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { HistoryChart } from './HistoryChart';
import {
  historyPanels,
  kindOf,
  RANGES,
  rangeWindow,
  useHistory,
  type HistoryRange,
} from './history';

interface Props {
  /** The series to draw: `cluster`, `pool:<id>`, `tenant:<slug>`, `node:<name>`, `job:<id>`. */
  series: string;
  title: string;
  /** Controls beside the range switch (e.g. which series). */
  extra?: ReactNode;
  testId?: string;
}

/**
 * The stored history of one telemetry series over the last hour, day or week: what the
 * live views cannot show (how busy the cluster was overnight, when a node's traffic fell).
 */
export function TelemetryHistoryCard({ series, title, extra, testId = 'history' }: Props) {
  const { t } = useTranslation();
  const [range, setRange] = useState<HistoryRange>('1h');
  const history = useHistory(series, range);
  const kind = kindOf(series);
  const panels = useMemo(
    () => historyPanels(history.data?.points ?? [], kind),
    [history.data, kind],
  );
  // As of the last fetch (the chart draws only once there is one), so the axis moves with
  // the data rather than on every render.
  const span = useMemo(
    () => rangeWindow(range, history.dataUpdatedAt),
    [range, history.dataUpdatedAt],
  );
  const names = useMemo(
    () =>
      Object.fromEntries(
        [...panels.upper, ...panels.lower].map((l) => [l.key, t(`telemetry.line_${l.key}`)]),
      ),
    [panels, t],
  );
  let body: ReactNode;
  if (history.isPending) body = <Skeleton active />;
  else if (history.isError)
    body = <QueryErrorResult error={history.error} onRetry={() => void history.refetch()} />;
  else if (history.data.points.length === 0)
    body = <Empty description={t('telemetry.noHistory')} data-testid={`${testId}-empty`} />;
  else
    body = (
      <HistoryChart
        panels={panels}
        names={names}
        upperName={t('telemetry.percent')}
        lowerName={t(panels.lowerUnit === 'bytes' ? 'telemetry.traffic' : 'telemetry.gpus')}
        label={t('telemetry.chartLabel', { title, range: t(`telemetry.range_${range}`) })}
        span={span}
      />
    );
  return (
    <Card
      title={title}
      data-testid={testId}
      extra={
        <span style={{ display: 'inline-flex', gap: 12, alignItems: 'center' }}>
          {extra}
          <Segmented<HistoryRange>
            aria-label={t('telemetry.range')}
            size="small"
            value={range}
            onChange={setRange}
            options={RANGES.map((r) => ({ value: r, label: t(`telemetry.range_${r}`) }))}
          />
        </span>
      }
    >
      {body}
    </Card>
  );
}
