import { ArrowLeftOutlined } from '@ant-design/icons';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import {
  Badge,
  Button,
  Card,
  Descriptions,
  Empty,
  Skeleton,
  Space,
  Table,
  Tag,
  Typography,
} from 'antd';
import type { ColumnsType } from 'antd/es/table';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import type { paths } from '../../api/schema';
import { CursorPager } from '../../components/CursorPager';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { QueryTable } from '../../components/QueryTable';
import { api, unwrap } from '../../lib/api';
import { useCursorPages } from '../../lib/cursorPages';
import type { Incident, NodeHealth } from '../../lib/apiTypes';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { CHECK_STATUS_COLOR, type CheckStatus, faultCodes, HEALTH_COLOR } from './healthStyle';
import { useHealthPollInterval } from './healthLive';
import { incidentColumns, incidentExpandable, resolveColumn } from './incidentColumns';
import { NodeActionButtons } from './NodeActionButtons';
import { GpuHistoryCard } from '../telemetry/GpuHistoryCard';
import { TelemetryHistoryCard } from '../telemetry/TelemetryHistoryCard';

type NodeCheck = NodeHealth['checks'][number];
type CheckChange =
  paths['/api/v1/health/nodes/{id}/history/']['get']['responses'][200]['content']['application/json']['results'][number];

const HISTORY_PAGE = 20;
const INCIDENT_PAGE = 50;

/** /health/nodes/:id, the deep link to one node (the grid's cells link here). */
export function NodeDetailPage() {
  const { t } = useTranslation();
  const id = Number(useParams().id);
  if (!Number.isInteger(id) || id <= 0) {
    return <Empty description={t('health.nodeNotFound')} />;
  }
  return <NodeDetail id={id} />;
}

function NodeDetail({ id }: { id: number }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const refetchInterval = useHealthPollInterval();
  const node = useQuery({
    // Under ['health', 'nodes'] so the cordon/spare actions' invalidation refreshes this page.
    queryKey: ['health', 'nodes', id],
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/v1/health/nodes/{id}/', { params: { path: { id } }, signal })),
    refetchInterval,
  });
  const back = (
    <Button icon={<ArrowLeftOutlined />} onClick={() => void navigate('/health')}>
      {t('health.back')}
    </Button>
  );

  if (node.isPending) return <Skeleton active paragraph={{ rows: 8 }} />;
  if (node.isError) {
    return (
      <>
        <PageHeader title={t('health.title')} extra={back} />
        <QueryErrorResult error={node.error} onRetry={() => void node.refetch()} />
      </>
    );
  }
  const n = node.data;
  return (
    <>
      <PageHeader
        title={n.name}
        subtitle={t('health.nodeSubtitle', { id: n.id })}
        extra={
          <>
            {back}
            <NodeActionButtons node={n} compact={false} />
          </>
        }
      />
      <Space orientation="vertical" size={16} style={{ width: '100%' }}>
        <Card>
          <Descriptions column={{ xs: 1, md: 3 }} data-testid="node-summary">
            <Descriptions.Item label={t('health.pool')}>{n.pool ?? '—'}</Descriptions.Item>
            <Descriptions.Item label={t('health.accelerators')}>
              {`${n.accelerator_model} × ${n.accelerator_count}`}
            </Descriptions.Item>
            <Descriptions.Item label={t('health.health')}>
              <Badge color={HEALTH_COLOR[n.health]} text={t(`health.${n.health}`)} />
            </Descriptions.Item>
            <Descriptions.Item label={t('health.status')}>
              {n.cordoned && <Tag color="orange">{t('health.cordoned')}</Tag>}
              {n.is_spare && <Tag>{t('health.spare')}</Tag>}
              {!n.cordoned && !n.is_spare && <Tag color="green">{t('health.inService')}</Tag>}
            </Descriptions.Item>
            <Descriptions.Item label={t('health.openIncidents')}>
              <span data-testid="open-incidents">{n.open_incidents}</span>
            </Descriptions.Item>
          </Descriptions>
        </Card>
        <TelemetryHistoryCard
          series={`node:${n.name}`}
          title={t('health.nodeHistory')}
          testId="node-telemetry"
        />
        {n.accelerator_count > 0 && <NodeGpuHistory node={n.name} gpuCount={n.accelerator_count} />}
        <LatestChecks checks={n.checks} />
        <CheckHistory id={id} />
        <NodeIncidents id={id} />
      </Space>
    </>
  );
}

/**
 * The history of one of the node's GPUs. Which one is in the address (`?gpu=3`), so the
 * cluster heatmap can link to a GPU; an index the node does not have shows GPU 0.
 */
function NodeGpuHistory({ node, gpuCount }: { node: string; gpuCount: number }) {
  const [params, setParams] = useSearchParams();
  const asked = Number(params.get('gpu') ?? 0);
  const gpu = Number.isInteger(asked) && asked >= 0 && asked < gpuCount ? asked : 0;
  return (
    <GpuHistoryCard
      node={node}
      gpuCount={gpuCount}
      gpu={gpu}
      onGpuChange={(next) => {
        setParams(
          (current) => {
            current.set('gpu', String(next));
            return current;
          },
          { replace: true },
        );
      }}
      testId="node-gpu-history"
    />
  );
}

function StatusTag({ status }: { status: CheckStatus }) {
  const { t } = useTranslation();
  return <Tag color={CHECK_STATUS_COLOR[status]}>{t(`health.checkStatus_${status}`)}</Tag>;
}

function Faults({ faults }: { faults: unknown }) {
  const codes = faultCodes(faults);
  if (codes.length === 0) return <Typography.Text type="secondary">—</Typography.Text>;
  return (
    <>
      {codes.map((c) => (
        <Tag key={c}>{c}</Tag>
      ))}
    </>
  );
}

/** The columns the latest checks and their history share: check name, status, faults. */
function checkColumns<T extends NodeCheck | CheckChange>(t: TFunction): ColumnsType<T> {
  return [
    { title: t('health.check'), dataIndex: 'check_name' },
    {
      title: t('health.status'),
      dataIndex: 'status',
      render: (s: CheckStatus) => <StatusTag status={s} />,
    },
    {
      title: t('health.faults'),
      dataIndex: 'faults',
      render: (f: unknown) => <Faults faults={f} />,
    },
  ];
}

function LatestChecks({ checks }: { checks: NodeCheck[] }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  return (
    <Card title={t('health.checks')}>
      <Table<NodeCheck>
        rowKey="check_name"
        size="small"
        data-testid="node-checks"
        pagination={false}
        dataSource={checks}
        locale={{ emptyText: <Empty description={t('health.noChecks')} /> }}
        columns={[
          ...checkColumns<NodeCheck>(t),
          {
            title: t('health.since'),
            dataIndex: 'since',
            render: (a: string) => formatDateTime(a, language),
          },
          {
            title: t('health.reported'),
            dataIndex: 'reported_at',
            render: (a: string) => formatDateTime(a, language),
          },
          { title: t('health.detail'), dataIndex: 'detail' },
        ]}
      />
    </Card>
  );
}

function CheckHistory({ id }: { id: number }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const pages = useCursorPages(String(id));
  const cursor = pages.cursor;
  const history = useQuery({
    queryKey: ['health', 'nodes', id, 'history', cursor],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/health/nodes/{id}/history/', {
          params: {
            path: { id },
            query: { page_size: HISTORY_PAGE, cursor },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
  return (
    <Card
      title={t('health.history')}
      extra={
        <CursorPager
          pages={pages}
          query={history}
          testId="history"
          size="small"
          placement="inline"
        />
      }
    >
      {history.isError ? (
        <QueryErrorResult error={history.error} onRetry={() => void history.refetch()} />
      ) : (
        <Table<CheckChange>
          rowKey="id"
          size="small"
          data-testid="node-history"
          loading={history.isFetching}
          pagination={false}
          dataSource={history.data?.results ?? []}
          locale={{ emptyText: <Empty description={t('health.noHistory')} /> }}
          columns={[
            {
              title: t('health.changedAt'),
              dataIndex: 'created_at',
              render: (a: string) => formatDateTime(a, language),
            },
            ...checkColumns<CheckChange>(t),
            { title: t('health.detail'), dataIndex: 'detail' },
          ]}
        />
      )}
    </Card>
  );
}

function NodeIncidents({ id }: { id: number }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const pages = useCursorPages(String(id));
  const cursor = pages.cursor;
  const refetchInterval = useHealthPollInterval();
  const incidents = useQuery({
    queryKey: ['health', 'incidents', { node: id, cursor }],
    // The API filters by node: the node's own incidents, newest first, a page at a time.
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/health/incidents/', {
          params: { query: { node: id, page_size: INCIDENT_PAGE, cursor } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval,
  });
  return (
    <Card title={t('health.nodeIncidents')}>
      <QueryTable<Incident>
        rowKey="id"
        size="small"
        data-testid="node-incidents"
        query={incidents}
        pagination={false}
        rows={incidents.data?.results ?? []}
        scroll={{ x: 'max-content' }}
        expandable={incidentExpandable}
        locale={{ emptyText: <Empty description={t('health.noIncidents')} /> }}
        columns={[
          {
            title: t('health.incidentState'),
            dataIndex: 'state',
            render: (s: Incident['state']) => (
              <Tag color={s === 'open' ? 'red' : 'default'}>{t(`health.incident_${s}`)}</Tag>
            ),
          },
          ...incidentColumns(t, language),
          {
            title: t('health.closedAt'),
            dataIndex: 'closed_at',
            render: (a: string | null) => (a === null ? '—' : formatDateTime(a, language)),
          },
          { title: t('health.detail'), dataIndex: 'detail' },
          resolveColumn(t('common.actions')),
        ]}
      />
      <CursorPager pages={pages} query={incidents} testId="node-incidents" size="small" />
    </Card>
  );
}
