import { CheckOutlined } from '@ant-design/icons';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  App,
  Badge,
  Button,
  Card,
  Empty,
  Result,
  Space,
  Table,
  Tabs,
  Tag,
  Tooltip,
  Typography,
} from 'antd';
import { useTranslation } from 'react-i18next';
import { Link, Route, Routes } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { QueryTable } from '../../components/QueryTable';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { Alert, Incident } from '../../lib/apiTypes';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { useTenant } from '../tenancy/useTenant';
import { HEALTH_COLOR, SEVERITY_COLOR } from './healthStyle';
import { incidentColumns } from './incidentColumns';
import { NodeActionButtons } from './NodeActionButtons';
import { NodeDetailPage } from './NodeDetailPage';

function useNodes() {
  return useQuery({
    queryKey: ['health', 'nodes'],
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/v1/health/nodes/', { params: { query: { page_size: 500 } }, signal })),
    refetchInterval: 15_000,
  });
}
function useIncidents() {
  return useQuery({
    queryKey: ['health', 'incidents'],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/health/incidents/', { params: { query: { page_size: 100 } }, signal }),
      ),
    refetchInterval: 15_000,
  });
}
function useAlerts() {
  return useQuery({
    queryKey: ['health', 'alerts'],
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/v1/health/alerts/', { params: { query: { page_size: 100 } }, signal })),
    refetchInterval: 15_000,
  });
}

export function HealthPage() {
  const { t } = useTranslation();
  const tenant = useTenant();
  if (!tenant.isPlatformAdmin) {
    return (
      <Card>
        <Result status="403" title={t('health.adminOnly')} subTitle={t('health.adminOnlyHint')} />
      </Card>
    );
  }
  return (
    <Routes>
      <Route index element={<HealthOverview />} />
      <Route path="nodes/:id" element={<NodeDetailPage />} />
    </Routes>
  );
}

function HealthOverview() {
  const { t } = useTranslation();
  return (
    <>
      <PageHeader title={t('health.title')} subtitle={t('health.subtitle')} />
      <Space orientation="vertical" size={16} style={{ width: '100%' }}>
        <AlertInbox />
        <NodeGrid />
        <Incidents />
      </Space>
    </>
  );
}

function NodeGrid() {
  const { t } = useTranslation();
  const nodes = useNodes();
  const list = [...(nodes.data?.results ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  const counts = { healthy: 0, degraded: 0, faulty: 0 };
  list.forEach((n) => (counts[n.health] += 1));
  return (
    <Card
      title={t('health.nodes')}
      loading={nodes.isPending}
      extra={
        <Space size={16}>
          {(['healthy', 'degraded', 'faulty'] as const).map((h) => (
            <Badge key={h} color={HEALTH_COLOR[h]} text={`${t(`health.${h}`)} ${counts[h]}`} />
          ))}
        </Space>
      }
    >
      {nodes.isError ? (
        <QueryErrorResult error={nodes.error} onRetry={() => void nodes.refetch()} />
      ) : list.length === 0 ? (
        <Empty description={t('health.noNodes')} />
      ) : (
        <div
          data-testid="node-grid"
          style={{
            display: 'grid',
            gridTemplateColumns: 'repeat(auto-fill, minmax(150px, 1fr))',
            gap: 8,
          }}
        >
          {list.map((n) => (
            <Tooltip
              key={n.id}
              title={`${n.accelerator_model} × ${n.accelerator_count} · ${n.pool ?? '—'}`}
            >
              <div
                data-testid="node-cell"
                data-health={n.health}
                tabIndex={0}
                aria-label={`${n.name}: ${t(`health.${n.health}`)}`}
                style={{
                  borderInlineStart: `4px solid ${HEALTH_COLOR[n.health]}`,
                  background: '#fafbfd',
                  border: '1px solid #e6e9f0',
                  borderLeftWidth: 4,
                  borderLeftColor: HEALTH_COLOR[n.health],
                  borderRadius: 6,
                  padding: '6px 10px',
                }}
              >
                <Link
                  to={`/health/nodes/${n.id}`}
                  style={{ fontSize: 12, fontWeight: 600 }}
                  data-testid={`node-link-${n.name}`}
                >
                  {n.name}
                </Link>
                <div style={{ fontSize: 12 }}>
                  {n.cordoned && <Tag color="orange">{t('health.cordoned')}</Tag>}
                  {n.is_spare && <Tag>{t('health.spare')}</Tag>}
                  {n.open_incidents > 0 && (
                    <Tag color="red">{t('health.incidentsCount', { n: n.open_incidents })}</Tag>
                  )}
                  {!n.cordoned && !n.is_spare && n.open_incidents === 0 && (
                    <Typography.Text type="secondary">{t(`health.${n.health}`)}</Typography.Text>
                  )}
                </div>
                <NodeActionButtons node={n} compact />
              </div>
            </Tooltip>
          ))}
        </div>
      )}
    </Card>
  );
}

function AlertInbox() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const language = currentLanguage();
  const alerts = useAlerts();
  const client = useQueryClient();
  const ack = useMutation<Alert, ApiError, number>({
    mutationFn: (id) =>
      unwrap(api.POST('/api/v1/health/alerts/{id}/acknowledge/', { params: { path: { id } } })),
    onSuccess: () => {
      void message.success(t('health.acknowledged'));
      void client.invalidateQueries({ queryKey: ['health', 'alerts'] });
    },
    onError: (e) => void message.error(e.detail),
  });
  return (
    <Card title={t('health.alerts')} data-testid="alert-inbox">
      <QueryTable<Alert>
        rowKey="id"
        size="small"
        query={alerts}
        pagination={false}
        rows={alerts.data?.results ?? []}
        locale={{
          emptyText: <Empty description={t('health.noAlerts')} data-testid="no-alerts" />,
        }}
        columns={[
          {
            title: t('health.severity'),
            dataIndex: 'severity',
            render: (s: Alert['severity']) => (
              <Tag color={SEVERITY_COLOR[s]}>{t(`severity.${s}`)}</Tag>
            ),
          },
          { title: t('health.node'), dataIndex: 'node_name' },
          { title: t('health.fault'), dataIndex: 'fault' },
          { title: t('health.message'), dataIndex: 'message' },
          { title: t('health.occurrences'), dataIndex: 'occurrences' },
          {
            title: t('health.raised'),
            dataIndex: 'created_at',
            render: (a: string) => formatDateTime(a, language),
          },
          {
            title: t('common.actions'),
            key: 'ack',
            render: (_, a) =>
              a.acknowledged_at === null ? (
                <Button
                  size="small"
                  icon={<CheckOutlined />}
                  loading={ack.isPending && ack.variables === a.id}
                  onClick={() => {
                    ack.mutate(a.id);
                  }}
                  data-testid={`ack-${a.id}`}
                >
                  {t('health.acknowledge')}
                </Button>
              ) : (
                <Typography.Text type="secondary">
                  {t('health.acknowledgedAt', {
                    time: formatDateTime(a.acknowledged_at, language),
                  })}
                </Typography.Text>
              ),
          },
        ]}
      />
    </Card>
  );
}

function Incidents() {
  const { t } = useTranslation();
  const language = currentLanguage();
  const incidents = useIncidents();
  return (
    <Card title={t('health.incidents')}>
      {incidents.isError ? (
        <QueryErrorResult error={incidents.error} onRetry={() => void incidents.refetch()} />
      ) : (
        <Tabs
          items={(['open', 'closed'] as const).map((state) => ({
            key: state,
            label: t(`health.incident_${state}`),
            children: (
              <Table<Incident>
                rowKey="id"
                size="small"
                loading={incidents.isPending}
                pagination={false}
                dataSource={(incidents.data?.results ?? []).filter((i) => i.state === state)}
                locale={{ emptyText: <Empty description={t('health.noIncidents')} /> }}
                columns={[
                  { title: t('health.node'), dataIndex: 'node_name' },
                  ...incidentColumns(t, language),
                  { title: t('health.detail'), dataIndex: 'detail' },
                ]}
              />
            ),
          }))}
        />
      )}
    </Card>
  );
}
