import { Alert, Button, Card, Empty, Segmented, Select, Skeleton, Typography } from 'antd';
import { lazy, Suspense, useMemo, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import {
  GPU_WINDOWS,
  gpuLines,
  gpuWindowSpan,
  isHistoryUnavailable,
  useGpuHistory,
  windowBeyondSource,
  type GpuUnit,
  type GpuWindow,
} from './gpuHistory';

const GpuHistoryChart = lazy(() =>
  import('./GpuHistoryChart').then((m) => ({ default: m.GpuHistoryChart })),
);

/** Up to this many GPUs the picker is a row of buttons; more, a drop-down. */
const SEGMENTED_MAX = 8;

interface Props {
  /** The node's name (the telemetry's hostname). */
  node: string;
  /** How many GPUs the node has: the picker offers 0..gpuCount-1 (unless `gpus` is given). */
  gpuCount: number;
  /** The GPUs the picker offers instead (a job's own GPUs on the node). */
  gpus?: readonly number[];
  gpu: number;
  onGpuChange: (gpu: number) => void;
  testId?: string;
}

/**
 * One GPU of a node over the last hour, 6 hours or day: what the node's aggregate hides (one
 * GPU idling, throttling or running hot while the others work). Refetched every 10 s.
 */
export function GpuHistoryCard({
  node,
  gpuCount,
  gpu,
  gpus,
  onGpuChange,
  testId = 'gpu-history',
}: Props) {
  const { t } = useTranslation();
  const [range, setRange] = useState<GpuWindow>('1h');
  const history = useGpuHistory(node, gpu, range);
  const data = history.data;
  const lines = useMemo(() => gpuLines(data?.points ?? []), [data]);
  const span = useMemo(
    () => gpuWindowSpan(range, data?.kept_s, history.dataUpdatedAt),
    [range, data?.kept_s, history.dataUpdatedAt],
  );
  const names = useMemo(
    () => Object.fromEntries(lines.map((l) => [l.key, t(`telemetry.gpuLine_${l.key}`)])),
    [lines, t],
  );
  const axisNames = useMemo<Record<GpuUnit, string>>(
    () => ({ percent: t('telemetry.percent'), watts: t('telemetry.watts'), celsius: '°C' }),
    [t],
  );
  const gpuOptions = (gpus ?? Array.from({ length: gpuCount }, (_, i) => i)).map((i) => ({
    value: i,
    label: t('telemetry.gpuIndex', { gpu: i }),
  }));

  let body: ReactNode;
  if (history.isPending) body = <Skeleton active />;
  else if (isHistoryUnavailable(history.error))
    body = (
      <Alert
        type="info"
        showIcon
        data-testid={`${testId}-unavailable`}
        title={t('telemetry.gpuUnavailable')}
        description={history.error.detail}
        action={
          <Button size="small" onClick={() => void history.refetch()}>
            {t('errors.retry')}
          </Button>
        }
      />
    );
  else if (history.isError)
    body = <QueryErrorResult error={history.error} onRetry={() => void history.refetch()} />;
  else if (history.data.points.length === 0)
    body = <Empty description={t('telemetry.gpuNoSamples')} data-testid={`${testId}-empty`} />;
  else
    body = (
      <Suspense fallback={<Skeleton active />}>
        <GpuHistoryChart
          lines={lines}
          names={names}
          axisNames={axisNames}
          label={t('telemetry.gpuChartLabel', {
            gpu,
            node,
            range: t(`telemetry.range_${range}`),
          })}
          span={span}
        />
      </Suspense>
    );

  return (
    <Card
      title={t('telemetry.gpuHistory')}
      data-testid={testId}
      extra={
        <Segmented<GpuWindow>
          aria-label={t('telemetry.range')}
          size="small"
          value={range}
          onChange={setRange}
          options={GPU_WINDOWS.map((w) => ({ value: w, label: t(`telemetry.range_${w}`) }))}
        />
      }
    >
      <div
        style={{
          display: 'flex',
          flexWrap: 'wrap',
          alignItems: 'center',
          gap: 12,
          marginBottom: 12,
        }}
      >
        {/* Its own scrolling row: eight GPU buttons are wider than a phone. */}
        <div style={{ minWidth: 0, maxWidth: '100%', overflowX: 'auto' }}>
          {gpuOptions.length <= SEGMENTED_MAX ? (
            <Segmented<number>
              aria-label={t('telemetry.gpu')}
              size="small"
              value={gpu}
              onChange={onGpuChange}
              options={gpuOptions}
            />
          ) : (
            <Select<number>
              aria-label={t('telemetry.gpu')}
              size="small"
              style={{ minWidth: 120 }}
              value={gpu}
              onChange={onGpuChange}
              options={gpuOptions}
            />
          )}
        </div>
        {data !== undefined && (
          <Typography.Text type="secondary" data-testid={`${testId}-source`}>
            {t(`telemetry.gpuSource_${data.source}`, { step: data.resolution_s })}
          </Typography.Text>
        )}
      </div>
      {windowBeyondSource(data, range) && (
        <Typography.Paragraph type="secondary" data-testid={`${testId}-kept`}>
          {t('telemetry.gpuKeptHour')}
        </Typography.Paragraph>
      )}
      {body}
    </Card>
  );
}
