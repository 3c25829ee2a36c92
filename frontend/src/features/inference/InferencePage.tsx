import { keepPreviousData, useQuery } from '@tanstack/react-query';
import {
  Button,
  Card,
  Col,
  Descriptions,
  Empty,
  Progress,
  Row,
  Skeleton,
  Statistic,
  Table,
  Tag,
  Tooltip,
} from 'antd';
import { lazy, Suspense, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';
import { CreateButton } from '../../components/CreateButton';
import { CursorPager } from '../../components/CursorPager';
import { NoTenantResult } from '../../components/NoTenantResult';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { QueryTable } from '../../components/QueryTable';
import { api, unwrap } from '../../lib/api';
import { useCursorPages } from '../../lib/cursorPages';
import type { InferenceService, ScalingDecision, TrafficSample } from '../../lib/apiTypes';
import { formatDateTime, formatNumber } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { schedulerText } from '../jobs/schedulerText';
import { useTenant } from '../tenancy/useTenant';
import { CreateServiceModal } from './CreateServiceModal';
import { metricLabel, scalingReasonLabel, servingSettingsText } from './labels';
import { RevisionsCard } from './RevisionsCard';
import { RolloutStatus } from './RolloutStatus';
import { ServiceStateTag } from './ServiceStateTag';
import { StopServiceButton } from './StopServiceButton';
import { UpdateModelButton } from './UpdateModelButton';

// echarts stays out of the first-screen bundle: the chart's chunk loads with the detail view.
const TrafficChart = lazy(() =>
  import('./TrafficChart').then((m) => ({ default: m.TrafficChart })),
);

export function InferencePage() {
  const tenant = useTenant();
  if (tenant.slug === null) return <NoTenantResult />;
  return (
    <Routes>
      <Route index element={<ServiceList tenant={tenant.slug} canWrite={tenant.canWrite} />} />
      <Route path=":id" element={<ServiceDetail tenant={tenant.slug} />} />
    </Routes>
  );
}

function ServiceList({ tenant, canWrite }: { tenant: string; canWrite: boolean }) {
  const { t } = useTranslation();
  const [creating, setCreating] = useState(false);
  const pages = useCursorPages(tenant);
  const cursor = pages.cursor;
  const services = useQuery({
    queryKey: ['inference', tenant, 'list', cursor],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/inference/services/', {
          params: { path: { tenant }, query: { cursor } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: 10_000,
  });
  return (
    <>
      <PageHeader
        title={t('inference.title')}
        subtitle={t('inference.subtitle')}
        extra={
          canWrite && (
            <CreateButton
              label={t('inference.create')}
              onClick={() => {
                setCreating(true);
              }}
            />
          )
        }
      />
      <Card>
        <QueryTable<InferenceService>
          rowKey="id"
          data-testid="services-table"
          query={services}
          pagination={false}
          rows={services.data?.results ?? []}
          locale={{ emptyText: <Empty description={t('inference.empty')} /> }}
          columns={[
            {
              title: t('jobs.name'),
              dataIndex: 'name',
              render: (n: string, s) => <Link to={`/inference/${s.id}`}>{n}</Link>,
            },
            { title: t('inference.model'), dataIndex: 'model_uri' },
            {
              title: t('jobs.state'),
              dataIndex: 'state',
              render: (s: string) => <ServiceStateTag state={s} />,
            },
            {
              title: t('inference.replicas'),
              key: 'replicas',
              render: (_, s) =>
                t('inference.replicasValue', {
                  ready: s.ready_replicas,
                  desired: s.desired_replicas,
                }),
            },
            {
              title: t('inference.target'),
              key: 'target',
              render: (_, s) => `${metricLabel(t, s.target_metric)} ${s.target_value}`,
            },
          ]}
        />
        <CursorPager pages={pages} query={services} testId="services-page" />
      </Card>
      {creating && (
        <CreateServiceModal
          tenant={tenant}
          onClose={() => {
            setCreating(false);
          }}
        />
      )}
    </>
  );
}

function ServiceDetail({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const id = Number(useParams().id);
  const language = currentLanguage();
  const path = { tenant, id };
  const service = useQuery({
    queryKey: ['inference', tenant, id],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/inference/services/{id}/', { params: { path }, signal }),
      ),
    refetchInterval: 10_000,
  });
  const metrics = useQuery({
    queryKey: ['inference', tenant, id, 'metrics'],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/inference/services/{id}/metrics/', {
          params: { path, query: { page_size: 60 } },
          signal,
        }),
      ),
    refetchInterval: 10_000,
  });
  const decisions = useQuery({
    queryKey: ['inference', tenant, id, 'decisions'],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/inference/services/{id}/decisions/', {
          params: { path, query: { page_size: 50 } },
          signal,
        }),
      ),
    refetchInterval: 10_000,
  });
  // Oldest first, for the chart; the API does not promise an order.
  const samples = useMemo(
    () => [...(metrics.data?.results ?? [])].sort((a, b) => a.at.localeCompare(b.at)),
    [metrics.data],
  );
  const chartNames = useMemo(
    () => ({
      qps: t('inference.qps'),
      p95: t('inference.p95'),
      ready: t('inference.readyShort'),
      loading: t('inference.loading'),
      replicas: t('inference.replicas'),
    }),
    [t],
  );
  if (service.isPending) return <Skeleton active />;
  if (service.isError)
    return <QueryErrorResult error={service.error} onRetry={() => void service.refetch()} />;
  const s = service.data;
  const latest: TrafficSample | undefined = samples.at(-1);
  const num = (v: number | undefined, d = 1) =>
    v === undefined ? '—' : formatNumber(v, language, d);
  // Errors are counted per sample period; the rate is against the requests in that period.
  const errorsText = (sample: TrafficSample) => {
    const requests = sample.qps * sample.period_s;
    if (requests <= 0) return num(sample.errors, 0);
    return `${num(sample.errors, 0)} (${num((sample.errors / requests) * 100, 2)}%)`;
  };
  return (
    <>
      <PageHeader
        title={s.name}
        subtitle={s.model_uri}
        extra={
          <>
            {s.simulated && (
              // The simulator makes the replicas and traffic up (every number on this page);
              // say so at the top, so no one reads it as real load.
              <Tooltip title={t('inference.simulatedHint')}>
                <Tag color="purple" style={{ alignSelf: 'center' }} data-testid="traffic-simulated">
                  {t('inference.simulated')}
                </Tag>
              </Tooltip>
            )}
            <Button onClick={() => void navigate('/inference')}>{t('jobDetail.back')}</Button>
            <UpdateModelButton tenant={tenant} service={s} />
            <StopServiceButton tenant={tenant} service={s} />
          </>
        }
      />
      <Row gutter={[16, 16]}>
        {[
          ['inference.readyReplicas', `${s.ready_replicas} / ${s.desired_replicas}`],
          ['inference.qps', num(latest?.qps)],
          ['inference.p50', num(latest?.p50_ms, 0)],
          ['inference.p95', num(latest?.p95_ms, 0)],
          ['inference.p99', num(latest?.p99_ms, 0)],
          ['inference.gpuUtil', latest ? `${num(latest.gpu_util * 100, 0)}%` : '—'],
          ['inference.concurrency', num(latest?.concurrency)],
          ['inference.errors', latest ? errorsText(latest) : '—'],
        ].map(([key, value]) => (
          <Col xs={12} md={6} xl={3} key={key}>
            <Card size="small">
              <Statistic title={t(key as 'inference.qps')} value={value} data-testid={key} />
            </Card>
          </Col>
        ))}
      </Row>
      <Card
        title={t('inference.history')}
        style={{ marginTop: 16 }}
        data-testid="inference-history"
      >
        {metrics.isError ? (
          <QueryErrorResult error={metrics.error} onRetry={() => void metrics.refetch()} />
        ) : metrics.isPending ? (
          <Skeleton active paragraph={{ rows: 5 }} />
        ) : samples.length === 0 ? (
          <Empty description={t('inference.noSamples')} />
        ) : (
          <Suspense fallback={<Skeleton.Node active style={{ width: '100%', height: 340 }} />}>
            <TrafficChart
              samples={samples}
              names={chartNames}
              label={t('inference.historyLabel', { count: samples.length })}
            />
          </Suspense>
        )}
      </Card>
      {latest && Object.keys(latest.gpu_by_replica).length > 0 && (
        <Card
          title={t('inference.gpuPerReplica')}
          style={{ marginTop: 16 }}
          data-testid="gpu-per-replica"
        >
          {Object.entries(latest.gpu_by_replica)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([replica, use]) => (
              <Row key={replica} gutter={8} align="middle">
                <Col flex="280px">
                  <code>{replica}</code>
                </Col>
                <Col flex="auto">
                  <Progress percent={Math.round(use * 100)} size="small" />
                </Col>
              </Row>
            ))}
        </Card>
      )}
      <Card title={t('inference.config')} style={{ marginTop: 16 }}>
        <Descriptions size="small" column={{ xs: 1, md: 3 }}>
          <Descriptions.Item label={t('jobs.state')}>
            <ServiceStateTag state={s.state} />
          </Descriptions.Item>
          <Descriptions.Item label={t('inference.revision')} span={{ xs: 1, md: 2 }}>
            <RolloutStatus service={s} />
          </Descriptions.Item>
          <Descriptions.Item label={t('inference.runtime')}>{s.runtime_image}</Descriptions.Item>
          <Descriptions.Item label={t('inference.replicaRange')}>
            {s.min_replicas} – {s.max_replicas}
          </Descriptions.Item>
          <Descriptions.Item label={t('inference.target')}>
            {metricLabel(t, s.target_metric)} {s.target_value}
          </Descriptions.Item>
          <Descriptions.Item label={t('jobs.accelerators')}>
            {s.accelerator_milli > 0 ? s.accelerator_milli / 1000 : s.accelerators}
          </Descriptions.Item>
          <Descriptions.Item label={t('inference.job')}>
            <Link to={`/jobs/${s.job}`}>#{s.job}</Link>
          </Descriptions.Item>
          <Descriptions.Item label={t('inference.portAndProbes')} span={{ xs: 1, md: 2 }}>
            <span data-testid="service-settings">{servingSettingsText(t, s)}</span>
          </Descriptions.Item>
        </Descriptions>
      </Card>
      <RevisionsCard tenant={tenant} service={s} />
      <Card title={t('inference.decisions')} style={{ marginTop: 16 }}>
        <Table<ScalingDecision>
          rowKey="id"
          size="small"
          loading={decisions.isPending}
          pagination={false}
          dataSource={decisions.data?.results ?? []}
          locale={{ emptyText: <Empty description={t('inference.noDecisions')} /> }}
          columns={[
            {
              title: t('inference.at'),
              dataIndex: 'at',
              render: (a: string) => formatDateTime(a, language),
            },
            {
              title: t('inference.change'),
              key: 'c',
              render: (_, d) => (
                <>
                  {`${d.current} → ${d.desired}`}
                  {d.wanted != null && (
                    // The scheduler admitted fewer than the autoscaler asked (quota, room).
                    <Tooltip title={schedulerText(t, language, d.limited_detail, d.limited_by)}>
                      <Tag color="orange" style={{ marginLeft: 8 }}>
                        {t('inference.wantedBy', { n: d.wanted })}
                      </Tag>
                    </Tooltip>
                  )}
                </>
              ),
            },
            {
              title: t('inference.metric'),
              dataIndex: 'metric',
              render: (m: string) => metricLabel(t, m),
            },
            {
              title: t('inference.observed'),
              key: 'o',
              render: (_, d) => num(d.observed_stable, 2),
            },
            {
              title: t('inference.panic'),
              dataIndex: 'panic',
              render: (p: boolean) => (p ? <Tag color="red">!</Tag> : ''),
            },
            {
              title: t('jobDetail.reason'),
              dataIndex: 'reason',
              render: (r: string) => scalingReasonLabel(t, r),
            },
          ]}
        />
      </Card>
    </>
  );
}
