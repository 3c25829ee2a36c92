import { useQuery, useQueryClient } from '@tanstack/react-query';
import {
  Badge,
  Card,
  Col,
  Empty,
  Row,
  Segmented,
  Skeleton,
  Space,
  Statistic,
  Tooltip,
  Typography,
} from 'antd';
import { lazy, Suspense, useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';
import { NoTenantResult } from '../../components/NoTenantResult';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { api, unwrap } from '../../lib/api';
import type { ConnectionState } from '../../lib/events';
import { formatNumber } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { TelemetryHistoryCard } from '../telemetry/TelemetryHistoryCard';
import { useTenant } from '../tenancy/useTenant';
import { FIELDS, type Field } from './heatmapData';
import { HeatmapStore } from './heatmapStore';
import { useOpenGpuHistory } from './openGpuHistory';
import { TelemetryFeed } from './telemetryFeed';
import { TopologyCard } from './TopologyCard';

const GpuHeatmap = lazy(() => import('./GpuHeatmap').then((m) => ({ default: m.GpuHeatmap })));

const CONNECTION_STATUS: Record<ConnectionState, 'success' | 'processing' | 'warning' | 'default'> =
  { open: 'success', connecting: 'processing', reconnecting: 'warning', idle: 'default' };

export function ClusterPage() {
  const tenant = useTenant();
  if (!tenant.isPlatformAdmin && tenant.slug === null) return <NoTenantResult />;
  // Platform admins see every GPU; members see their tenant's GPUs plus the cluster aggregate.
  const topic = tenant.isPlatformAdmin ? 'heatmap' : `heatmap:${tenant.slug ?? ''}`;
  return (
    <>
      <Cluster key={topic} topic={topic} admin={tenant.isPlatformAdmin} />
      <div style={{ marginTop: 16 }}>
        <TopologyCard />
      </div>
      <ClusterHistory tenant={tenant.slug} tenantName={tenant.name} />
    </>
  );
}

/** The cluster's stored history; a member can switch to their own tenant's share of it. */
function ClusterHistory({
  tenant,
  tenantName,
}: {
  tenant: string | null;
  tenantName: string | null;
}) {
  const { t } = useTranslation();
  const [scope, setScope] = useState<'cluster' | 'tenant'>('cluster');
  const series = scope === 'tenant' && tenant !== null ? `tenant:${tenant}` : 'cluster';
  return (
    <div style={{ marginTop: 16 }}>
      <TelemetryHistoryCard
        series={series}
        title={t('cluster.history')}
        testId="cluster-history"
        extra={
          tenant !== null && (
            <Segmented<'cluster' | 'tenant'>
              aria-label={t('cluster.scope')}
              size="small"
              value={scope}
              onChange={setScope}
              options={[
                { value: 'cluster', label: t('cluster.scope_cluster') },
                {
                  value: 'tenant',
                  label: t('cluster.scope_tenant', { tenant: tenantName ?? tenant }),
                },
              ]}
            />
          )
        }
      />
    </div>
  );
}

const snapshotKey = (topic: string) => ['telemetry', 'snapshot', topic] as const;

/**
 * The snapshot query is the resync point (initial load, and again after a gap); between
 * snapshots the telemetry socket's deltas go straight into the typed-array store, which the
 * canvas heatmap reads without React re-rendering 10,000 cells.
 */
function useLiveHeatmap(topic: string) {
  const client = useQueryClient();
  const [store] = useState(() => new HeatmapStore());
  const [connection, setConnection] = useState<ConnectionState>('idle');
  const queryFn = ({ signal }: { signal?: AbortSignal }) =>
    unwrap(api.GET('/api/v1/telemetry/snapshot/', { params: { query: { topic } }, signal }));
  const snapshot = useQuery({
    queryKey: snapshotKey(topic),
    queryFn,
    // 10,000 cells: comparing old and new snapshots deeply would cost more than it saves.
    structuralSharing: false,
    refetchOnWindowFocus: false,
  });
  const [feed] = useState(
    () =>
      new TelemetryFeed({
        topic,
        store,
        fetchSnapshot: () => client.query({ queryKey: snapshotKey(topic), queryFn, staleTime: 0 }),
        onStateChange: setConnection,
      }),
  );
  useEffect(() => {
    feed.start();
    return () => {
      feed.stop();
    };
  }, [feed]);
  useEffect(() => {
    if (snapshot.data) feed.loadSnapshot(snapshot.data);
  }, [feed, snapshot.data]);
  // Re-renders the summary once per applied frame; the canvas repaints on its own.
  useSyncExternalStore(
    (listener) => store.subscribe(listener),
    () => store.version,
  );
  return { store, snapshot, connection };
}

function Cluster({ topic, admin }: { topic: string; admin: boolean }) {
  const { t } = useTranslation();
  // A platform admin opens a GPU's history from its cell (the node pages are theirs alone).
  const openGpu = useOpenGpuHistory();
  const language = currentLanguage();
  const [field, setField] = useState<Field>('util');
  const { store, snapshot, connection } = useLiveHeatmap(topic);
  const summary = store.summary.cluster ?? {};
  const fieldLabels = useMemo(
    () =>
      Object.fromEntries(FIELDS.map((f) => [f, t(`cluster.field_${f}`)])) as Record<Field, string>,
    [t],
  );

  return (
    <>
      <PageHeader title={t('cluster.title')} subtitle={t('cluster.subtitle')} />
      {snapshot.isError && store.version === 0 ? (
        <Card>
          <QueryErrorResult error={snapshot.error} onRetry={() => void snapshot.refetch()} />
        </Card>
      ) : store.version === 0 ? (
        <Card>
          <Skeleton active />
        </Card>
      ) : (
        <Space orientation="vertical" size={16} style={{ width: '100%' }}>
          <Row gutter={[16, 16]}>
            {(['gpus', 'busy', 'util'] as const).map((k) => (
              <Col xs={8} key={k}>
                <Card size="small">
                  <Statistic
                    title={t(`cluster.summary_${k}`)}
                    value={summary[k] === undefined ? '—' : formatNumber(summary[k], language)}
                    suffix={k === 'util' && summary[k] !== undefined ? '%' : undefined}
                    data-testid={`cluster-${k}`}
                  />
                </Card>
              </Col>
            ))}
          </Row>
          <Card
            title={
              <Space size={12}>
                {t('cluster.heatmap')}
                <Tooltip title={t('cluster.liveHint')}>
                  <span data-testid="heatmap-connection" data-state={connection} role="status">
                    <Badge
                      status={CONNECTION_STATUS[connection]}
                      text={t(`connection.${connection}`)}
                    />
                  </span>
                </Tooltip>
              </Space>
            }
            extra={
              <Segmented<Field>
                aria-label={t('cluster.metric')}
                value={field}
                onChange={setField}
                options={FIELDS.map((f) => ({ value: f, label: fieldLabels[f] }))}
              />
            }
          >
            {store.gpuCount === 0 ? (
              <Empty description={t('cluster.noGpus')} data-testid="cluster-empty" />
            ) : (
              <>
                <Typography.Paragraph type="secondary" data-testid="heatmap-caption">
                  {t('cluster.caption', { nodes: store.nodes.length, gpus: store.gpuCount })}
                </Typography.Paragraph>
                <Suspense fallback={<Skeleton active />}>
                  <GpuHeatmap
                    store={store}
                    field={field}
                    label={t('cluster.heatmapLabel', { field: fieldLabels[field] })}
                    fieldLabels={fieldLabels}
                    emptyLabel={t('cluster.emptySlot')}
                    onCellClick={admin ? openGpu : undefined}
                    clickHint={t('cluster.gpuHistoryHint')}
                  />
                </Suspense>
              </>
            )}
          </Card>
        </Space>
      )}
    </>
  );
}
