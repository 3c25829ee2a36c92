import { Card, Empty, Table, Tag, theme, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { lazy, Suspense, useMemo, type HTMLAttributes } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { JobStateTag } from '../../components/JobStateTag';
import type { SweepDetail, SweepResult } from '../../lib/apiTypes';
import { ChartFallback } from '../experiments/RunPanels';
import { byRank, chartOf, parameterNames, valueText } from './sweepData';

// The experiments page's chart, in its own chunk as there: echarts is loaded only to draw.
const ParallelChart = lazy(() =>
  import('../experiments/ParallelChart').then((m) => ({ default: m.ParallelChart })),
);

/** Every trial best first (the best highlighted, those stopped early tagged), and the
 * parameters charted against the sweep's metric. */
export function SweepResults({ sweep }: { sweep: SweepDetail }) {
  const { t } = useTranslation();
  const { token } = theme.useToken();
  const metric = sweep.metric ?? '';
  const byBest = sweep.rank_by === 'best';
  const bracketed = (sweep.brackets ?? 1) > 1;
  const names = useMemo(() => parameterNames(sweep), [sweep]);
  const rows = useMemo(() => byRank(sweep.outcomes), [sweep.outcomes]);
  const chart = useMemo(() => (metric === '' ? null : chartOf(sweep, metric)), [sweep, metric]);

  const columns: ColumnsType<SweepResult> = [
    {
      title: t('sweeps.rank'),
      dataIndex: 'rank',
      width: 90,
      render: (rank: number | null) =>
        rank === null ? (
          '—'
        ) : (
          <>
            {rank}
            {rank === 1 && (
              <Tag color="success" style={{ marginLeft: 8 }}>
                {t('sweeps.bestTag')}
              </Tag>
            )}
          </>
        ),
    },
    { title: t('sweeps.trial'), dataIndex: 'index', width: 70, render: (i: number) => `#${i}` },
    ...names.map((name) => ({
      title: name,
      key: `param-${name}`,
      render: (_: unknown, row: SweepResult) => valueText(row.params[name]),
    })),
    {
      title: t('sweeps.job'),
      dataIndex: 'job',
      render: (job: SweepResult['job'], row: SweepResult) =>
        job === null ? (
          <Typography.Text type="secondary">{t('sweeps.waiting')}</Typography.Text>
        ) : (
          <span style={{ whiteSpace: 'nowrap' }}>
            <Link to={`/jobs/${job.id}`}>{job.name}</Link> <JobStateTag state={job.state} />
            {row.stopped_step !== null && (
              <Tag color="warning" data-testid={`trial-stopped-${row.index}`}>
                {t('sweeps.stoppedAt', { step: row.stopped_step })}
              </Tag>
            )}
          </span>
        ),
    },
    // With several halving brackets, each trial's: a trial is judged against its own only.
    ...(bracketed
      ? [
          {
            title: t('sweeps.bracket'),
            key: 'bracket',
            render: (_: unknown, row: SweepResult) => row.bracket ?? '—',
          },
        ]
      : []),
    {
      title:
        metric === '' ? t('sweeps.value') : byBest ? t('sweeps.valueBest', { metric }) : metric,
      dataIndex: 'value',
      render: (value: number | null) => valueText(value),
    },
    {
      title: t('sweeps.step'),
      dataIndex: 'step',
      render: (step: number | null) => step ?? '—',
    },
    // Ranked by the best value, the newest is shown too: a trial may have got worse since.
    ...(byBest
      ? [
          {
            title: t('sweeps.newest'),
            key: 'newest',
            render: (_: unknown, row: SweepResult) => valueText(row.last_value),
          },
        ]
      : []),
  ];

  return (
    <>
      <Card title={t('sweeps.results')} style={{ marginTop: 16 }}>
        <Table<SweepResult>
          rowKey="index"
          size="small"
          data-testid="sweep-results"
          columns={columns}
          dataSource={rows}
          pagination={false}
          scroll={{ x: 'max-content' }}
          onRow={(row) =>
            row.rank === 1
              ? ({
                  'data-best': 'true',
                  style: { background: token.colorSuccessBg },
                } as HTMLAttributes<HTMLElement>)
              : {}
          }
        />
      </Card>
      <Card
        title={metric === '' ? t('sweeps.chartNoMetricTitle') : t('sweeps.chart', { metric })}
        style={{ marginTop: 16 }}
      >
        {chart === null ? (
          <Empty description={t('sweeps.chartNoMetric')} />
        ) : chart.rows.length === 0 ? (
          <Empty description={t('sweeps.chartEmpty', { metric })} data-testid="sweep-chart-empty" />
        ) : (
          <Suspense fallback={<ChartFallback height={320} />}>
            <ParallelChart
              axes={chart.axes}
              rows={chart.rows}
              label={t('sweeps.chartLabel', { metric, count: chart.rows.length })}
            />
          </Suspense>
        )}
      </Card>
    </>
  );
}
