import { Card, Col, Empty, Row, Select, Skeleton, Statistic, Table, Tag, Typography } from 'antd';
import { lazy, Suspense, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { formatDateTime, formatNumber } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { type Checkpoint, type Run, useCheckpoints, useRunSeries } from './api';
import { formatParam, metricNames, runKpis } from './runData';

// echarts loads with the first chart, not with the page that may show none.
const CurvesChart = lazy(() => import('./CurvesChart').then((m) => ({ default: m.CurvesChart })));

const RUN_STATE_COLOR: Record<NonNullable<Run['state']>, string> = {
  running: 'processing',
  finished: 'success',
  failed: 'error',
  cancelled: 'default',
};

export function RunStateTag({ state }: { state: Run['state'] }) {
  const { t } = useTranslation();
  const value = state ?? 'running';
  return <Tag color={RUN_STATE_COLOR[value]}>{t(`runs.state.${value}`)}</Tag>;
}

export function ChartFallback({ height = 260 }: { height?: number }) {
  return <Skeleton.Node active style={{ width: '100%', height }} />;
}

/** Headline numbers of a run: latest loss, throughput, MFU (when reported) and step. */
export function RunKpiRow({ run }: { run: Run }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const kpis = runKpis(run.keys);
  const items: { id: string; title: string; value: string }[] = [];
  if (kpis.loss?.last_value != null) {
    items.push({ id: 'loss', title: t('runs.kpiLoss'), value: formatParam(kpis.loss.last_value) });
  }
  if (kpis.throughput?.last_value != null) {
    items.push({
      id: 'throughput',
      title: t('runs.kpiThroughput', { key: kpis.throughput.name }),
      value: formatNumber(kpis.throughput.last_value, language, 0),
    });
  }
  if (kpis.mfu?.last_value != null) {
    const mfu = kpis.mfu.last_value;
    // MFU is reported as a fraction by the SDK; a value above 1 is already a percentage.
    const percent = mfu <= 1 ? mfu * 100 : mfu;
    items.push({
      id: 'mfu',
      title: t('runs.kpiMfu'),
      value: `${formatNumber(percent, language, 1)}%`,
    });
  }
  if (kpis.step !== null) {
    items.push({
      id: 'step',
      title: t('runs.kpiStep'),
      value: formatNumber(kpis.step, language, 0),
    });
  }
  if (items.length === 0) return null;
  return (
    <Row gutter={[16, 16]} data-testid="run-kpis" style={{ marginBottom: 16 }}>
      {items.map((item) => (
        <Col key={item.id} xs={12} md={6}>
          <Card size="small">
            <Statistic
              // A metric key in the title ("train/throughput_samples_per_second") has no
              // space to wrap at: it breaks anywhere rather than run out of a phone's card.
              title={<span style={{ overflowWrap: 'anywhere' }}>{item.title}</span>}
              value={item.value}
              data-testid={`kpi-${item.id}`}
            />
          </Card>
        </Col>
      ))}
    </Row>
  );
}

const DEFAULT_CHARTS = 4;
const MAX_POINTS = 1000;

/** One chart per chosen metric key of one run (their scales differ, so no overlay). */
export function RunCurves({ tenant, run, live }: { tenant: string; run: Run; live: boolean }) {
  const { t } = useTranslation();
  const names = useMemo(() => metricNames([run]), [run]);
  const [chosen, setChosen] = useState<string[] | null>(null);
  const keys = chosen ?? names.slice(0, DEFAULT_CHARTS);
  const series = useRunSeries(tenant, run.id, { keys, maxPoints: MAX_POINTS }, live);

  if (names.length === 0) {
    return <Empty description={t('runs.noMetrics')} data-testid="run-no-metrics" />;
  }
  return (
    <div data-testid="run-curves">
      <Select
        mode="multiple"
        aria-label={t('runs.metricKeys')}
        placeholder={t('runs.metricKeys')}
        maxTagCount="responsive"
        style={{ width: 480, maxWidth: '100%', marginBottom: 12 }}
        value={keys}
        onChange={(value: string[]) => {
          setChosen(value);
        }}
        options={names.map((name) => ({ value: name, label: name }))}
      />
      {series.isError ? (
        <QueryErrorResult error={series.error} onRetry={() => void series.refetch()} />
      ) : (
        <Row gutter={[16, 16]}>
          {keys.map((key) => {
            const s = series.data?.series[key];
            return (
              <Col key={key} xs={24} lg={12}>
                <Card
                  size="small"
                  title={<span data-testid="curve-title">{key}</span>}
                  extra={
                    s?.downsampled ? (
                      <Typography.Text type="secondary">
                        {t('runs.downsampled', { shown: s.steps.length, count: s.count })}
                      </Typography.Text>
                    ) : undefined
                  }
                >
                  {series.isPending || s === undefined ? (
                    <ChartFallback />
                  ) : (
                    <Suspense fallback={<ChartFallback />}>
                      <CurvesChart
                        testId={`curve-${key}`}
                        label={t('runs.curveLabel', { key })}
                        lines={[{ name: run.name, steps: s.steps, values: s.values }]}
                      />
                    </Suspense>
                  )}
                </Card>
              </Col>
            );
          })}
        </Row>
      )}
    </div>
  );
}

function formatBytes(bytes: number): string {
  if (bytes <= 0) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  const exp = Math.min(units.length - 1, Math.floor(Math.log2(bytes) / 10));
  return `${+(bytes / 2 ** (10 * exp)).toFixed(1)} ${units[exp] ?? 'B'}`;
}

export function CheckpointsTable({
  tenant,
  runId,
  live,
}: {
  tenant: string;
  runId: number;
  live: boolean;
}) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const checkpoints = useCheckpoints(tenant, runId, live);
  if (checkpoints.isError) {
    return (
      <QueryErrorResult error={checkpoints.error} onRetry={() => void checkpoints.refetch()} />
    );
  }
  return (
    <Table<Checkpoint>
      data-testid="checkpoints-table"
      size="small"
      rowKey="id"
      loading={checkpoints.isPending}
      dataSource={checkpoints.data ?? []}
      pagination={{ pageSize: 10, hideOnSinglePage: true }}
      scroll={{ x: 'max-content' }}
      locale={{ emptyText: <Empty description={t('runs.noCheckpoints')} /> }}
      columns={[
        { title: t('runs.step'), dataIndex: 'step' },
        {
          title: t('runs.checkpointState'),
          key: 'state',
          render: (_, c) =>
            c.state === 'complete' ? (
              <Tag color="success">{t('runs.complete')}</Tag>
            ) : (
              <Tag color="warning">
                {t('runs.incomplete', { done: c.shards_done, shards: c.shards })}
              </Tag>
            ),
        },
        { title: t('runs.size'), key: 'size', render: (_, c) => formatBytes(c.size_bytes) },
        {
          title: t('runs.path'),
          dataIndex: 'path',
          render: (path: string) => (
            <Typography.Text code copyable={{ text: path }} ellipsis style={{ maxWidth: 360 }}>
              {path}
            </Typography.Text>
          ),
        },
        {
          title: t('runs.savedAt'),
          key: 'at',
          render: (_, c) => formatDateTime(c.completed_at ?? c.created_at, language),
        },
      ]}
    />
  );
}
