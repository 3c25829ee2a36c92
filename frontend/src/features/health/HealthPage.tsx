import { CheckOutlined } from '@ant-design/icons';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  App,
  Badge,
  Button,
  Card,
  Empty,
  Result,
  Segmented,
  Space,
  Tabs,
  Tag,
  Tooltip,
  Typography,
} from 'antd';
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, Route, Routes, useLocation, useNavigate } from 'react-router';
import { CursorPager } from '../../components/CursorPager';
import { NameSearch } from '../../components/NameSearch';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { QueryTable } from '../../components/QueryTable';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { Alert, Incident, NodeHealth } from '../../lib/apiTypes';
import { useCursorPages } from '../../lib/cursorPages';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { useTenant } from '../tenancy/useTenant';
import { HEALTH_COLOR, HEALTH_STATES, SEVERITY_COLOR } from './healthStyle';
import { useHealthPollInterval } from './healthLive';
import { incidentColumns, incidentExpandable, resolveColumn } from './incidentColumns';
import { NodeActionButtons } from './NodeActionButtons';
import { NodeDetailPage } from './NodeDetailPage';
import { NodeTokensTab } from './NodeTokensTab';
import { ProbeRunsTab } from './ProbeRunsTab';
import { ReceiversTab } from './ReceiversTab';
import { RulesTab } from './RulesTab';

/** Cells on one page of the grid: a 10,000-GPU cluster has over a thousand nodes. */
const GRID_PAGE = 200;

type HealthState = NodeHealth['health'];
interface GridFilters {
  health?: HealthState;
  name?: string;
}

function useNodes(filters: GridFilters, cursor: string | undefined) {
  const refetchInterval = useHealthPollInterval();
  return useQuery({
    queryKey: ['health', 'nodes', 'grid', { ...filters, cursor }],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/health/nodes/', {
          params: {
            query: {
              page_size: GRID_PAGE,
              health: filters.health && [filters.health],
              name: filters.name,
              cursor,
            },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval,
  });
}

/** The whole fleet's counts (the grid shows a page of it). */
function useNodeSummary() {
  const refetchInterval = useHealthPollInterval();
  return useQuery({
    queryKey: ['health', 'nodes', 'summary'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/v1/health/nodes/summary/', { signal })),
    refetchInterval,
  });
}
/** Rows on one page of the incident and alert lists. */
const LIST_PAGE = 50;

function useIncidents(state: Incident['state'], cursor: string | undefined) {
  const refetchInterval = useHealthPollInterval();
  return useQuery({
    queryKey: ['health', 'incidents', { state, cursor }],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/health/incidents/', {
          params: {
            query: { state, page_size: LIST_PAGE, cursor },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval,
  });
}

function useAlerts(state: Alert['state'], cursor: string | undefined) {
  const refetchInterval = useHealthPollInterval();
  return useQuery({
    queryKey: ['health', 'alerts', { state, cursor }],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/health/alerts/', {
          params: {
            query: { state, page_size: LIST_PAGE, cursor },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval,
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
      <Route path="nodes/:id" element={<NodeDetailPage />} />
      <Route path="*" element={<HealthConsole />} />
    </Routes>
  );
}

/** The operator console's sections, each at its own address under /health. */
const SECTIONS = ['overview', 'rules', 'receivers', 'agents', 'probes'] as const;
type Section = (typeof SECTIONS)[number];

function HealthConsole() {
  const { t } = useTranslation();
  const location = useLocation();
  const navigate = useNavigate();
  const tail = location.pathname.replace(/^\/health\/?/, '').split('/')[0] ?? '';
  const section: Section = SECTIONS.find((s) => s === tail) ?? 'overview';
  const body: Record<Section, ReactNode> = {
    overview: (
      <Space orientation="vertical" size={16} style={{ width: '100%' }}>
        <AlertInbox />
        <NodeGrid />
        <Incidents />
      </Space>
    ),
    rules: <RulesTab />,
    receivers: <ReceiversTab />,
    agents: <NodeTokensTab />,
    probes: <ProbeRunsTab />,
  };
  return (
    <>
      <PageHeader title={t('health.title')} subtitle={t('health.subtitle')} />
      <Tabs
        activeKey={section}
        onChange={(key) => {
          void navigate(key === 'overview' ? '/health' : `/health/${key}`);
        }}
        items={SECTIONS.map((s) => ({ key: s, label: t(`health.section_${s}`) }))}
      />
      {body[section]}
    </>
  );
}

function NodeGrid() {
  const { t } = useTranslation();
  const [filters, setFilters] = useState<GridFilters>({});
  const pages = useCursorPages(JSON.stringify(filters));
  const nodes = useNodes(filters, pages.cursor);
  const summary = useNodeSummary();
  const list = nodes.data?.results ?? [];
  const count = (h: HealthState | 'total') => summary.data?.[h] ?? '…';
  return (
    <Card title={t('health.nodes')} loading={nodes.isPending}>
      {/* In the body, not the header's `extra`: a header does not wrap, and on a phone the
          counts alone are wider than the screen, so they scroll sideways in their own row. */}
      <div
        style={{
          display: 'flex',
          flexWrap: 'wrap',
          alignItems: 'center',
          gap: 12,
          marginBottom: 12,
        }}
      >
        <div
          style={{ minWidth: 0, maxWidth: '100%', overflowX: 'auto' }}
          data-testid="health-filter"
        >
          <Segmented<HealthState | 'all'>
            aria-label={t('health.filterHealth')}
            value={filters.health ?? 'all'}
            onChange={(v) => {
              setFilters((f) => ({ ...f, health: v === 'all' ? undefined : v }));
            }}
            options={[
              { value: 'all', label: `${t('health.allNodes')} ${count('total')}` },
              ...HEALTH_STATES.map((h) => ({
                value: h,
                label: <Badge color={HEALTH_COLOR[h]} text={`${t(`health.${h}`)} ${count(h)}`} />,
              })),
            ]}
          />
        </div>
        <NameSearch
          label={t('health.searchNode')}
          size="small"
          onSearch={(name) => {
            setFilters((f) => ({ ...f, name }));
          }}
        />
      </div>
      {nodes.isError ? (
        <QueryErrorResult error={nodes.error} onRetry={() => void nodes.refetch()} />
      ) : list.length === 0 ? (
        <Empty
          description={
            filters.health === undefined && filters.name === undefined
              ? t('health.noNodes')
              : t('health.noNodesMatch')
          }
        />
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
      <CursorPager pages={pages} query={nodes} testId="grid-page" size="small" order="name" />
    </Card>
  );
}

function AlertInbox() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const language = currentLanguage();
  // Open alerts by default: resolved ones pile up and must not push an open one off the page.
  const [state, setState] = useState<Alert['state']>('open');
  const pages = useCursorPages(state);
  const alerts = useAlerts(state, pages.cursor);
  const client = useQueryClient();
  const ack = useMutation<Alert, ApiError, number>({
    mutationFn: (id) =>
      unwrap(api.POST('/api/v1/health/alerts/{id}/acknowledge/', { params: { path: { id } } })),
    onSuccess: () => {
      void message.success(t('health.acknowledged'));
      void client.invalidateQueries({ queryKey: ['health', 'alerts'] });
    },
    onError: (e) => void message.error(e.summary),
  });
  return (
    <Card
      title={t('health.alerts')}
      data-testid="alert-inbox"
      extra={
        <Segmented<Alert['state']>
          aria-label={t('health.alertState')}
          value={state}
          onChange={setState}
          options={(['open', 'resolved'] as const).map((s) => ({
            value: s,
            label: t(`health.alert_${s}`),
          }))}
        />
      }
    >
      <QueryTable<Alert>
        rowKey="id"
        size="small"
        query={alerts}
        pagination={false}
        rows={alerts.data?.results ?? []}
        scroll={{ x: 'max-content' }}
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
            title: t('health.delivery'),
            key: 'delivery',
            render: (_, a) => <DeliveryTags alert={a} />,
          },
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
      <CursorPager pages={pages} query={alerts} testId="alerts" size="small" />
    </Card>
  );
}

function Incidents() {
  const { t } = useTranslation();
  return (
    <Card title={t('health.incidents')}>
      <Tabs
        items={(['open', 'closed'] as const).map((state) => ({
          key: state,
          label: t(`health.incident_${state}`),
          children: <IncidentList state={state} />,
        }))}
      />
    </Card>
  );
}

/** One tab of the incidents: its state's incidents, newest first, a page at a time (filtered
 * by the server: a page of all incidents could hold no open one while some are open). */
function IncidentList({ state }: { state: Incident['state'] }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const pages = useCursorPages(state);
  const incidents = useIncidents(state, pages.cursor);
  return (
    <>
      <QueryTable<Incident>
        rowKey="id"
        size="small"
        data-testid={`incidents-${state}`}
        query={incidents}
        pagination={false}
        rows={incidents.data?.results ?? []}
        scroll={{ x: 'max-content' }}
        expandable={incidentExpandable}
        locale={{ emptyText: <Empty description={t('health.noIncidents')} /> }}
        columns={[
          { title: t('health.node'), dataIndex: 'node_name' },
          ...incidentColumns(t, language),
          { title: t('health.detail'), dataIndex: 'detail' },
          ...(state === 'open' ? [resolveColumn(t('common.actions'))] : []),
        ]}
      />
      <CursorPager pages={pages} query={incidents} testId={`incidents-${state}`} size="small" />
    </>
  );
}

const DELIVERY_COLOR = { sent: 'green', retrying: 'orange', failed: 'red' } as const;

/** Each receiver's delivery of the alert: sent, retrying or failed (the error on hover). */
function DeliveryTags({ alert }: { alert: Alert }) {
  const { t } = useTranslation();
  if (alert.delivery_status.length === 0) {
    return <Typography.Text type="secondary">—</Typography.Text>;
  }
  return (
    <Space size={4} wrap data-testid={`deliveries-${String(alert.id)}`}>
      {alert.delivery_status.map((d) => (
        <Tooltip
          key={d.receiver}
          title={`${d.outcome} · ${t('health.deliveryAttempts', { n: alert.delivery_attempts })}`}
        >
          <Tag color={DELIVERY_COLOR[d.state]}>
            {`${d.receiver_name ?? t('health.deletedReceiver')}: ${t(`health.delivery_${d.state}`)}`}
          </Tag>
        </Tooltip>
      ))}
    </Space>
  );
}
