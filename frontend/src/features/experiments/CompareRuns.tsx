import { Card, Col, Empty, Form, InputNumber, Row, Select, Switch, Table, Typography } from 'antd';
import { lazy, Suspense, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { type Run, type SeriesQuery, useRunsSeries } from './api';
import type { CurveLine } from './CurvesChart';
import { ChartFallback } from './RunPanels';
import {
  flattenConfig,
  formatParam,
  lastValue,
  metricNames,
  paramColumns,
  type ParamValue,
} from './runData';

const CurvesChart = lazy(() => import('./CurvesChart').then((m) => ({ default: m.CurvesChart })));
const ParallelChart = lazy(() =>
  import('./ParallelChart').then((m) => ({ default: m.ParallelChart })),
);

const POINT_CHOICES = [250, 500, 1000, 2000];
const DEFAULT_KEYS = 4;
const MAX_PARALLEL_PARAMS = 12;
// Hyperparameter table column widths (px).
const PARAM_WIDTH = 160;
const RUN_WIDTH = 200;

interface TableRow {
  key: string;
  param: string;
  kind: 'param' | 'metric';
  differs: boolean;
  values: Record<number, ParamValue>;
}

/** Overlayed curves, a hyperparameter table and parallel coordinates for the chosen runs. */
export function CompareRuns({ tenant, runs }: { tenant: string; runs: Run[] }) {
  const { t } = useTranslation();
  const names = useMemo(() => metricNames(runs), [runs]);
  const [chosenKeys, setChosenKeys] = useState<string[] | null>(null);
  const [maxPoints, setMaxPoints] = useState(500);
  const [stepMin, setStepMin] = useState<number | null>(null);
  const [stepMax, setStepMax] = useState<number | null>(null);
  const [onlyDiffering, setOnlyDiffering] = useState(false);
  const [finalKey, setFinalKey] = useState<string | null>(null);

  const keys = (chosenKeys ?? names.slice(0, DEFAULT_KEYS)).filter((k) => names.includes(k));
  const query: SeriesQuery = {
    keys,
    maxPoints,
    ...(stepMin === null ? {} : { stepMin }),
    ...(stepMax === null || (stepMin !== null && stepMax < stepMin) ? {} : { stepMax }),
  };
  const series = useRunsSeries(
    tenant,
    runs.map((r) => r.id),
    query,
  );
  const seriesError = series.find((s) => s.isError)?.error;
  const loading = series.some((s) => s.isPending && s.fetchStatus !== 'idle');

  const columns = useMemo(() => paramColumns(runs), [runs]);
  const flat = useMemo(() => new Map(runs.map((r) => [r.id, flattenConfig(r.config)])), [runs]);
  const metric = finalKey !== null && names.includes(finalKey) ? finalKey : names[0];

  const tableRows: TableRow[] = [
    ...columns.map((c) => ({
      key: `p:${c.key}`,
      param: c.key,
      kind: 'param' as const,
      differs: c.differs,
      values: Object.fromEntries(runs.map((r) => [r.id, flat.get(r.id)?.[c.key] ?? null])),
    })),
    ...names.map((name) => {
      const values = Object.fromEntries(runs.map((r) => [r.id, lastValue(r, name)]));
      return {
        key: `m:${name}`,
        param: name,
        kind: 'metric' as const,
        differs: new Set(Object.values(values)).size > 1,
        values,
      };
    }),
  ].filter((row) => !onlyDiffering || row.differs);

  const differing = columns.filter((c) => c.differs);
  const axes = [...(differing.length > 0 ? differing : columns)].slice(0, MAX_PARALLEL_PARAMS);
  const parallelAxes = [
    ...axes.map((c) => ({ name: c.key, numeric: c.numeric })),
    ...(metric === undefined
      ? []
      : [{ name: t('experiments.finalOf', { key: metric }), numeric: true }]),
  ];
  const parallelRows = runs.map((r) => ({
    name: `#${r.id} ${r.name}`,
    values: [
      ...axes
        .map((c) => flat.get(r.id)?.[c.key] ?? null)
        .map((v) => (typeof v === 'boolean' ? String(v) : v)),
      ...(metric === undefined ? [] : [lastValue(r, metric)]),
    ],
  }));

  return (
    <>
      <Card title={t('experiments.curves')} data-testid="compare-curves">
        <Form layout="inline" style={{ marginBottom: 16, rowGap: 8 }}>
          {/* At most the card's width (a phone's): the chosen keys fold into "+ n" beyond it. */}
          <Form.Item
            label={t('runs.metricKeys')}
            htmlFor="compare-keys"
            style={{ width: 420, maxWidth: '100%' }}
          >
            <Select
              id="compare-keys"
              mode="multiple"
              maxTagCount="responsive"
              style={{ width: '100%' }}
              value={keys}
              onChange={(value: string[]) => {
                setChosenKeys(value);
              }}
              options={names.map((n) => ({ value: n, label: n }))}
            />
          </Form.Item>
          <Form.Item label={t('experiments.stepFrom')} htmlFor="compare-step-min">
            <InputNumber<number>
              id="compare-step-min"
              min={0}
              precision={0}
              value={stepMin}
              onChange={(v) => {
                setStepMin(v);
              }}
            />
          </Form.Item>
          <Form.Item
            label={t('experiments.stepTo')}
            htmlFor="compare-step-max"
            validateStatus={
              stepMin !== null && stepMax !== null && stepMax < stepMin ? 'error' : undefined
            }
            help={
              stepMin !== null && stepMax !== null && stepMax < stepMin
                ? t('experiments.stepOrder')
                : undefined
            }
          >
            <InputNumber<number>
              id="compare-step-max"
              min={0}
              precision={0}
              value={stepMax}
              onChange={(v) => {
                setStepMax(v);
              }}
            />
          </Form.Item>
          <Form.Item label={t('experiments.maxPoints')} htmlFor="compare-max-points">
            <Select
              id="compare-max-points"
              style={{ width: 100 }}
              value={maxPoints}
              onChange={(v: number) => {
                setMaxPoints(v);
              }}
              options={POINT_CHOICES.map((n) => ({ value: n, label: n }))}
            />
          </Form.Item>
        </Form>
        {names.length === 0 ? (
          <Empty description={t('runs.noMetrics')} />
        ) : seriesError ? (
          <QueryErrorResult
            error={seriesError}
            onRetry={() => {
              for (const s of series) if (s.isError) void s.refetch();
            }}
          />
        ) : (
          <Row gutter={[16, 16]}>
            {keys.map((key) => {
              const lines: CurveLine[] = runs.flatMap((run, i) => {
                const s = series[i]?.data?.series[key];
                return s
                  ? [{ name: `#${run.id} ${run.name}`, steps: s.steps, values: s.values }]
                  : [];
              });
              return (
                <Col key={key} xs={24} xl={12}>
                  <Card size="small" title={<span data-testid="curve-title">{key}</span>}>
                    {loading ? (
                      <ChartFallback />
                    ) : (
                      <Suspense fallback={<ChartFallback />}>
                        <CurvesChart
                          testId={`compare-curve-${key}`}
                          label={t('experiments.overlayLabel', { key, count: lines.length })}
                          lines={lines}
                        />
                      </Suspense>
                    )}
                  </Card>
                </Col>
              );
            })}
          </Row>
        )}
      </Card>
      <Card
        title={t('experiments.hyperparameters')}
        extra={
          <label style={{ display: 'inline-flex', gap: 8, alignItems: 'center' }}>
            <Switch
              size="small"
              checked={onlyDiffering}
              onChange={setOnlyDiffering}
              aria-label={t('experiments.onlyDiffering')}
            />
            {t('experiments.onlyDiffering')}
          </label>
        }
      >
        <Table<TableRow>
          data-testid="hyperparam-table"
          size="small"
          pagination={false}
          // Fixed widths, long keys and names cut with an ellipsis: the table scrolls sideways
          // inside its card (a phone's is narrower than two runs) instead of widening the page.
          scroll={{ x: PARAM_WIDTH + RUN_WIDTH * runs.length }}
          dataSource={tableRows}
          locale={{ emptyText: <Empty description={t('experiments.noParams')} /> }}
          rowClassName={(row) => (row.kind === 'metric' ? 'zs-metric-row' : '')}
          columns={[
            {
              title: t('experiments.parameter'),
              key: 'param',
              fixed: 'left',
              width: PARAM_WIDTH,
              render: (_, row) => {
                const label =
                  row.kind === 'metric' ? t('experiments.lastOf', { key: row.param }) : row.param;
                return (
                  <Typography.Text
                    strong={row.differs}
                    type={row.kind === 'metric' ? 'secondary' : undefined}
                    ellipsis={{ tooltip: label }}
                  >
                    {label}
                  </Typography.Text>
                );
              },
            },
            ...runs.map((run) => ({
              title: (
                <Typography.Text ellipsis={{ tooltip: `#${run.id} ${run.name}` }}>
                  <Link to={`/experiments/runs/${run.id}`}>{`#${run.id} ${run.name}`}</Link>
                </Typography.Text>
              ),
              key: `run-${run.id}`,
              width: RUN_WIDTH,
              render: (_: unknown, row: TableRow) => {
                const value = formatParam(row.values[run.id]);
                return <Typography.Text ellipsis={{ tooltip: value }}>{value}</Typography.Text>;
              },
            })),
          ]}
        />
      </Card>
      <Card
        title={t('experiments.parallel')}
        extra={
          names.length > 0 && (
            <Select
              aria-label={t('experiments.finalMetric')}
              style={{ width: 220 }}
              value={metric}
              onChange={(v: string) => {
                setFinalKey(v);
              }}
              options={names.map((n) => ({
                value: n,
                label: t('experiments.finalOf', { key: n }),
              }))}
            />
          )
        }
      >
        {parallelAxes.length < 2 ? (
          <Empty description={t('experiments.parallelNeedsAxes')} />
        ) : (
          <Suspense fallback={<ChartFallback height={320} />}>
            <ParallelChart
              axes={parallelAxes}
              rows={parallelRows}
              label={t('experiments.parallelLabel', { count: runs.length })}
            />
          </Suspense>
        )}
      </Card>
    </>
  );
}
