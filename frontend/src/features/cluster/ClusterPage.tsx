import { useQuery } from '@tanstack/react-query';
import { Card, Col, Empty, Row, Segmented, Skeleton, Space, Statistic, Typography } from 'antd';
import { lazy, Suspense, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { NoTenantResult } from '../../components/NoTenantResult';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { api, unwrap } from '../../lib/api';
import { formatNumber } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { useTenant } from '../tenancy/useTenant';
import { toHeatmap } from './heatmapData';

const GpuHeatmap = lazy(() => import('./GpuHeatmap').then((m) => ({ default: m.GpuHeatmap })));

const FIELDS = ['util', 'fb_used_mib', 'temp_c', 'power_w', 'sm_pct'] as const;
type Field = (typeof FIELDS)[number];
const FIXED_MAX: Partial<Record<Field, number>> = { util: 100, sm_pct: 100, temp_c: 90 };

export function ClusterPage() {
  const tenant = useTenant();
  if (!tenant.isPlatformAdmin && tenant.slug === null) return <NoTenantResult />;
  // Platform admins see every GPU; members see their tenant's GPUs plus the cluster aggregate.
  const topic = tenant.isPlatformAdmin ? 'heatmap' : `heatmap:${tenant.slug ?? ''}`;
  return <Cluster topic={topic} />;
}

function Cluster({ topic }: { topic: string }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const [field, setField] = useState<Field>('util');
  const frame = useQuery({
    queryKey: ['telemetry', topic],
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/v1/telemetry/snapshot/', { params: { query: { topic } }, signal })),
    refetchInterval: 5_000,
  });
  const heatmap = useMemo(
    () => (frame.data ? toHeatmap(frame.data, field) : null),
    [frame.data, field],
  );
  const summary = (frame.data?.data.summary.cluster ?? {}) as Record<string, number | undefined>;

  return (
    <>
      <PageHeader title={t('cluster.title')} subtitle={t('cluster.subtitle')} />
      {frame.isError ? (
        <Card>
          <QueryErrorResult error={frame.error} onRetry={() => void frame.refetch()} />
        </Card>
      ) : frame.isPending || heatmap === null ? (
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
            title={t('cluster.heatmap')}
            extra={
              <Segmented<Field>
                aria-label={t('cluster.metric')}
                value={field}
                onChange={setField}
                options={FIELDS.map((f) => ({ value: f, label: t(`cluster.field_${f}`) }))}
              />
            }
          >
            {heatmap.nodes.length === 0 ? (
              <Empty description={t('cluster.noGpus')} data-testid="cluster-empty" />
            ) : (
              <>
                <Typography.Paragraph type="secondary" data-testid="heatmap-caption">
                  {t('cluster.caption', {
                    nodes: heatmap.nodes.length,
                    gpus: heatmap.cells.length,
                  })}
                </Typography.Paragraph>
                <Suspense fallback={<Skeleton active />}>
                  <GpuHeatmap
                    nodes={heatmap.nodes}
                    gpus={heatmap.gpus}
                    cells={heatmap.cells}
                    max={FIXED_MAX[field] ?? Math.max(1, heatmap.max)}
                    label={t('cluster.heatmapLabel', { field: t(`cluster.field_${field}`) })}
                    seriesName={t(`cluster.field_${field}`)}
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
