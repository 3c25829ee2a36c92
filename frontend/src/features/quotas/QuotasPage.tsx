import { AuditOutlined } from '@ant-design/icons';
import {
  App,
  Button,
  Card,
  Col,
  Empty,
  InputNumber,
  Progress,
  Row,
  Space,
  Table,
  Tag,
  Typography,
} from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { QueryTable } from '../../components/QueryTable';
import type { Pool, Quota, QueueEntry } from '../../lib/apiTypes';
import { formatDuration } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { usePoolQueue, usePools } from '../jobs/api';
import { roughWait, secondsUntil, SOON_MS } from '../jobs/helpers';
import { schedulerText } from '../jobs/schedulerText';
import { useTenant } from '../tenancy/useTenant';
import { useAllQuotas, usePatchQuota, useTenantQuotas } from './api';

export function QuotasPage() {
  const { t } = useTranslation();
  const tenant = useTenant();
  return (
    <>
      <PageHeader title={t('quotas.title')} subtitle={t('quotas.subtitle')} />
      <Space orientation="vertical" size={16} style={{ width: '100%' }}>
        {tenant.slug !== null && <TenantQuotas tenant={tenant.slug} name={tenant.name ?? ''} />}
        {tenant.isPlatformAdmin && <QuotaConsole />}
        <Pools />
      </Space>
    </>
  );
}

function UsageBar({
  used,
  guarantee,
  borrow,
}: {
  used: number;
  guarantee: number;
  borrow: number;
}) {
  const limit = guarantee + borrow;
  const percent = limit > 0 ? Math.min(100, (used / limit) * 100) : 0;
  const success = limit > 0 ? Math.min(100, (Math.min(used, guarantee) / limit) * 100) : 0;
  return (
    <Progress
      percent={Number(percent.toFixed(1))}
      success={{ percent: Number(success.toFixed(1)) }}
      size="small"
      format={() => `${used} / ${limit}`}
    />
  );
}

function TenantQuotas({ tenant, name }: { tenant: string; name: string }) {
  const { t } = useTranslation();
  const quotas = useTenantQuotas(tenant);
  return (
    <Card title={t('quotas.ownTitle', { tenant: name })} data-testid="tenant-quotas">
      <QueryTable<Quota>
        rowKey="id"
        size="middle"
        query={quotas}
        pagination={false}
        rows={quotas.data ?? []}
        locale={{ emptyText: <Empty description={t('quotas.emptyOwn')} /> }}
        columns={[
          { title: t('quotas.pool'), dataIndex: 'pool_name' },
          { title: t('quotas.model'), dataIndex: 'accelerator_model' },
          { title: t('quotas.guarantee'), dataIndex: 'guarantee' },
          { title: t('quotas.borrowLimit'), dataIndex: 'borrow_limit' },
          {
            title: t('quotas.used'),
            dataIndex: 'used',
            render: (used: number) => <span data-testid="quota-used">{used}</span>,
          },
          {
            title: t('quotas.usage'),
            key: 'usage',
            width: 260,
            render: (_, q) => (
              <UsageBar used={q.used} guarantee={q.guarantee ?? 0} borrow={q.borrow_limit ?? 0} />
            ),
          },
        ]}
      />
    </Card>
  );
}

interface Draft {
  guarantee?: number | null;
  borrow_limit?: number | null;
}

/** Platform admins edit guarantees and borrowing limits; the server validates against capacity. */
function QuotaConsole() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const quotas = useAllQuotas(true);
  const patch = usePatchQuota();
  const [drafts, setDrafts] = useState<Record<number, Draft>>({});
  const [errors, setErrors] = useState<Record<number, Record<string, string[]>>>({});

  const edit = (id: number, field: keyof Draft, value: number | null) => {
    setDrafts((d) => ({ ...d, [id]: { ...d[id], [field]: value } }));
  };

  const save = (quota: Quota) => {
    const draft = drafts[quota.id] ?? {};
    const body: Draft = {};
    if (draft.guarantee !== undefined && draft.guarantee !== null) body.guarantee = draft.guarantee;
    if (draft.borrow_limit !== undefined && draft.borrow_limit !== null)
      body.borrow_limit = draft.borrow_limit;
    patch.mutate(
      { id: quota.id, body: body as { guarantee?: number; borrow_limit?: number } },
      {
        onSuccess: () => {
          setErrors((e) => ({ ...e, [quota.id]: {} }));
          setDrafts((d) => ({ ...d, [quota.id]: {} }));
          void message.success(t('quotas.saved'));
        },
        onError: (error) => {
          const fieldErrors =
            Object.keys(error.errors).length > 0 ? error.errors : { detail: [error.detail] };
          setErrors((e) => ({ ...e, [quota.id]: fieldErrors }));
        },
      },
    );
  };

  const cell = (quota: Quota, field: keyof Draft) => {
    const value = drafts[quota.id]?.[field] ?? quota[field] ?? 0;
    const fieldErrors = errors[quota.id]?.[field];
    return (
      <div>
        <InputNumber
          min={0}
          value={value}
          status={fieldErrors ? 'error' : undefined}
          aria-label={t('quotas.editLabel', {
            field: t(field === 'guarantee' ? 'quotas.guarantee' : 'quotas.borrowLimit'),
            tenant: quota.tenant,
            pool: quota.pool_name,
          })}
          data-testid={`quota-${quota.id}-${field}`}
          onChange={(v) => {
            edit(quota.id, field, v);
          }}
        />
        {fieldErrors?.map((m) => (
          <Typography.Text
            type="danger"
            key={m}
            style={{ display: 'block', maxWidth: 280, fontSize: 12 }}
            role="alert"
            data-testid={`quota-${quota.id}-${field}-error`}
          >
            {m}
          </Typography.Text>
        ))}
      </div>
    );
  };

  return (
    <Card
      title={t('quotas.consoleTitle')}
      data-testid="quota-console"
      extra={
        <Button
          type="link"
          icon={<AuditOutlined />}
          href="/api/v1/audit/?object_type=quota"
          target="_blank"
        >
          {t('quotas.auditTrail')}
        </Button>
      }
    >
      <QueryTable<Quota>
        rowKey="id"
        size="middle"
        query={quotas}
        pagination={false}
        rows={quotas.data ?? []}
        locale={{ emptyText: <Empty description={t('quotas.emptyAll')} /> }}
        columns={[
          {
            title: t('quotas.tenant'),
            dataIndex: 'tenant',
            render: (s: string) => <Tag>{s}</Tag>,
          },
          { title: t('quotas.pool'), dataIndex: 'pool_name' },
          { title: t('quotas.model'), dataIndex: 'accelerator_model' },
          { title: t('quotas.guarantee'), key: 'g', render: (_, q) => cell(q, 'guarantee') },
          { title: t('quotas.borrowLimit'), key: 'b', render: (_, q) => cell(q, 'borrow_limit') },
          { title: t('quotas.used'), dataIndex: 'used' },
          {
            title: t('common.actions'),
            key: 'save',
            render: (_, q) => {
              const dirty = Object.values(drafts[q.id] ?? {}).some((v) => v !== undefined);
              return (
                <Space orientation="vertical" size={2}>
                  <Button
                    size="small"
                    type="primary"
                    disabled={!dirty}
                    loading={patch.isPending && patch.variables.id === q.id}
                    onClick={() => {
                      save(q);
                    }}
                    data-testid={`quota-${q.id}-save`}
                  >
                    {t('quotas.save')}
                  </Button>
                  {errors[q.id]?.detail && (
                    <Typography.Text type="danger" role="alert">
                      {errors[q.id]?.detail?.join(' ')}
                    </Typography.Text>
                  )}
                </Space>
              );
            },
          },
        ]}
      />
    </Card>
  );
}

function Pools() {
  const { t } = useTranslation();
  const pools = usePools();
  const [selected, setSelected] = useState<number | null>(null);
  if (pools.isError) {
    return (
      <Card title={t('pools.title')}>
        <QueryErrorResult error={pools.error} onRetry={() => void pools.refetch()} />
      </Card>
    );
  }
  const current = selected ?? pools.data?.[0]?.id ?? null;
  return (
    <Card title={t('pools.title')} loading={pools.isPending} data-testid="pools">
      {pools.data?.length === 0 ? (
        <Empty description={t('pools.empty')} />
      ) : (
        <Row gutter={[16, 16]}>
          <Col xs={24} lg={10}>
            <Table<Pool>
              rowKey="id"
              size="small"
              pagination={false}
              dataSource={pools.data ?? []}
              rowClassName={(p) => (p.id === current ? 'ant-table-row-selected' : '')}
              onRow={(p) => ({
                onClick: () => {
                  setSelected(p.id);
                },
                style: { cursor: 'pointer' },
              })}
              columns={[
                {
                  title: t('pools.name'),
                  dataIndex: 'name',
                  render: (name: string, p) => (
                    <Button
                      type="link"
                      size="small"
                      style={{ padding: 0 }}
                      onClick={() => {
                        setSelected(p.id);
                      }}
                    >
                      {name}
                    </Button>
                  ),
                },
                { title: t('pools.cluster'), dataIndex: 'cluster' },
                {
                  title: t('pools.topology'),
                  key: 'topology',
                  render: (_, p) => (
                    <Link
                      to={`/cluster?pool=${p.id}`}
                      onClick={(e) => {
                        e.stopPropagation();
                      }}
                    >
                      {t('pools.topologyLink')}
                    </Link>
                  ),
                },
                {
                  title: t('pools.capacity'),
                  key: 'capacity',
                  render: (_, p) =>
                    p.capacity.map((c) => (
                      <Tag key={c.model}>
                        {c.model} × {c.devices}
                      </Tag>
                    )),
                },
              ]}
            />
          </Col>
          <Col xs={24} lg={14}>
            <PoolQueue id={current} name={pools.data?.find((p) => p.id === current)?.name ?? ''} />
          </Col>
        </Row>
      )}
    </Card>
  );
}

function PoolQueue({ id, name }: { id: number | null; name: string }) {
  const { t } = useTranslation();
  const queue = usePoolQueue(id);
  return (
    <div data-testid="pool-queue">
      <Typography.Title level={5} style={{ marginTop: 0 }}>
        {t('pools.queueTitle', { pool: name })}
      </Typography.Title>
      {queue.isError ? (
        <QueryErrorResult error={queue.error} onRetry={() => void queue.refetch()} />
      ) : (
        <Table<QueueEntry>
          rowKey={(e) => `${e.position ?? 'x'}-${e.job ?? 'other'}-${e.waiting_s}`}
          size="small"
          pagination={false}
          loading={queue.isPending && id !== null}
          dataSource={queue.data ?? []}
          locale={{ emptyText: <Empty description={t('pools.queueEmpty')} /> }}
          columns={[
            { title: '#', dataIndex: 'position', render: (p: number | null) => p ?? '—' },
            {
              title: t('pools.job'),
              key: 'job',
              render: (_, e) =>
                e.job === null ? (
                  <Typography.Text type="secondary">{t('pools.otherTenant')}</Typography.Text>
                ) : (
                  `${e.name ?? ''} (${e.tenant ?? ''})`
                ),
            },
            { title: t('jobs.priority'), dataIndex: 'priority', render: (p: number) => `P${p}` },
            { title: t('pools.devices'), dataIndex: 'devices' },
            {
              title: t('pools.waiting'),
              dataIndex: 'waiting_s',
              render: (s: number) => formatDuration(s, currentLanguage()),
            },
            {
              title: t('pools.startsIn'),
              dataIndex: 'expected_start_at',
              render: (at: string | null) => {
                if (at === null) return '—';
                const left = secondsUntil(at);
                return left * 1000 < SOON_MS
                  ? t('pools.startsNow')
                  : `~${formatDuration(roughWait(left), currentLanguage())}`;
              },
            },
            {
              title: t('pools.reason'),
              key: 'reason',
              render: (_, e) =>
                e.pending_message === null
                  ? e.pending_code
                  : schedulerText(t, currentLanguage(), e.pending_detail, e.pending_message),
            },
            { title: t('pools.holds'), dataIndex: 'held_nodes' },
          ]}
        />
      )}
    </div>
  );
}
