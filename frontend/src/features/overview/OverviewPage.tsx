import {
  ApartmentOutlined,
  ClockCircleOutlined,
  ClusterOutlined,
  DatabaseOutlined,
  PlayCircleOutlined,
  ReloadOutlined,
  TeamOutlined,
} from '@ant-design/icons';
import { Button, Card, Col, Empty, Row, Skeleton, Typography } from 'antd';
import { lazy, type ReactNode, Suspense } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { StatCard } from '../../components/StatCard';
import type { Overview } from '../../lib/apiTypes';
import { formatClock, formatInteger } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { useOverview } from './api';
import { GpuModelTable } from './GpuModelTable';

// echarts is the heaviest dependency; the numbers render before it arrives.
const GpuModelChart = lazy(() =>
  import('./GpuModelChart').then((module) => ({ default: module.GpuModelChart })),
);

type StatKey = 'tenants' | 'clusters' | 'nodes' | 'gpus' | 'jobs_running' | 'jobs_pending';

interface StatSpec {
  key: StatKey;
  testId: string;
  icon: ReactNode;
  accent: string;
}

const STATS: StatSpec[] = [
  { key: 'tenants', testId: 'tenants', icon: <TeamOutlined />, accent: '#7c3aed' },
  { key: 'clusters', testId: 'clusters', icon: <ClusterOutlined />, accent: '#0891b2' },
  { key: 'nodes', testId: 'nodes', icon: <DatabaseOutlined />, accent: '#0d9488' },
  { key: 'gpus', testId: 'gpus', icon: <ApartmentOutlined />, accent: '#2563eb' },
  { key: 'jobs_running', testId: 'jobs-running', icon: <PlayCircleOutlined />, accent: '#16a34a' },
  { key: 'jobs_pending', testId: 'jobs-pending', icon: <ClockCircleOutlined />, accent: '#d97706' },
];

function useStatLabel() {
  const { t } = useTranslation();
  return (key: StatKey): string => {
    switch (key) {
      case 'tenants':
        return t('overview.tenants');
      case 'clusters':
        return t('overview.clusters');
      case 'nodes':
        return t('overview.nodes');
      case 'gpus':
        return t('overview.gpus');
      case 'jobs_running':
        return t('overview.jobsRunning');
      case 'jobs_pending':
        return t('overview.jobsPending');
    }
  };
}

// The GPU card counts schedulable capacity only; the footnote names the spares so its total
// reconciles with the cluster page, which lists every node.
function useFootnote() {
  const { t } = useTranslation();
  const language = currentLanguage();
  return (key: StatKey, data: Overview): string | undefined => {
    if (key === 'clusters') {
      return t('overview.poolsCount', { value: formatInteger(data.pools, language) });
    }
    if (key === 'gpus') {
      return data.spare_gpus > 0
        ? t('overview.sparesCount', { value: formatInteger(data.spare_gpus, language) })
        : t('overview.schedulable');
    }
    return undefined;
  };
}

function GpuBreakdown({ data }: { data: Overview }) {
  const { t } = useTranslation();
  if (data.clusters === 0) {
    return (
      <Empty
        data-testid="overview-empty"
        description={
          <>
            <Typography.Text strong>{t('overview.emptyTitle')}</Typography.Text>
            <br />
            <Typography.Text type="secondary">{t('overview.emptyDescription')}</Typography.Text>
          </>
        }
      />
    );
  }
  if (data.gpus_by_model.length === 0) {
    return <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('overview.noGpus')} />;
  }
  return (
    <Row gutter={[24, 16]} align="middle">
      <Col xs={24} lg={14}>
        <Suspense fallback={<Skeleton active paragraph={{ rows: 4 }} />}>
          <GpuModelChart
            rows={data.gpus_by_model}
            label={t('overview.chartLabel')}
            seriesName={t('overview.gpus')}
          />
        </Suspense>
      </Col>
      <Col xs={24} lg={10}>
        <GpuModelTable rows={data.gpus_by_model} total={data.gpus} />
      </Col>
    </Row>
  );
}

export function OverviewPage() {
  const { t } = useTranslation();
  const language = currentLanguage();
  const overview = useOverview();
  const statLabel = useStatLabel();
  const footnoteOf = useFootnote();
  const data = overview.data;

  return (
    <>
      <PageHeader
        title={t('overview.title')}
        subtitle={t('overview.subtitle')}
        extra={
          <>
            {overview.dataUpdatedAt > 0 && (
              <Typography.Text type="secondary" style={{ alignSelf: 'center', fontSize: 12 }}>
                {t('overview.updatedAt', { time: formatClock(overview.dataUpdatedAt, language) })}
              </Typography.Text>
            )}
            <Button
              icon={<ReloadOutlined />}
              loading={overview.isFetching}
              onClick={() => void overview.refetch()}
            >
              {t('overview.refresh')}
            </Button>
          </>
        }
      />
      {overview.isError && data === undefined ? (
        <Card>
          <QueryErrorResult error={overview.error} onRetry={() => void overview.refetch()} />
        </Card>
      ) : (
        <>
          <Row gutter={[16, 16]}>
            {STATS.map((stat) => (
              <Col key={stat.key} xs={24} sm={12} lg={8} xl={4}>
                <StatCard
                  id={stat.testId}
                  label={statLabel(stat.key)}
                  value={data?.[stat.key]}
                  formatted={data ? formatInteger(data[stat.key], language) : undefined}
                  icon={stat.icon}
                  accent={stat.accent}
                  loading={overview.isPending}
                  footnote={data ? footnoteOf(stat.key, data) : undefined}
                />
              </Col>
            ))}
          </Row>
          <Card
            title={t('overview.gpusByModel')}
            extra={
              <Typography.Text type="secondary" style={{ fontSize: 12 }}>
                {t('overview.gpusByModelHint')}
              </Typography.Text>
            }
            style={{ marginTop: 16 }}
          >
            {data === undefined ? (
              <Skeleton active paragraph={{ rows: 4 }} />
            ) : (
              <GpuBreakdown data={data} />
            )}
          </Card>
        </>
      )}
    </>
  );
}
