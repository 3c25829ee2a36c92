import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Empty, Select, Space, Table, Tag, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CursorPager } from '../../components/CursorPager';
import { NameSearch } from '../../components/NameSearch';
import { QueryTable } from '../../components/QueryTable';
import { api, unwrap } from '../../lib/api';
import type { AuditEntry } from '../../lib/apiTypes';
import { useCursorPages } from '../../lib/cursorPages';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { changedFields } from './auditChanges';

type Action = AuditEntry['action'];
const ACTIONS = ['create', 'update', 'delete'] as const satisfies readonly Action[];
const ACTION_COLOR: Record<Action, string> = { create: 'green', update: 'blue', delete: 'red' };

interface AuditFilters {
  action?: Action;
  actor_name?: string;
}

const AUDIT_PAGE = 50;

/** The object types the audit log records, by their translation key; others show as sent. */
const OBJECT_TYPES = {
  'tenancy.tenant': 'tenant',
  'tenancy.membership': 'membership',
  'tenancy.project': 'project',
  'governance.idlepolicy': 'idlePolicy',
  'governance.idleflag': 'idleFlag',
  'jobs.job': 'job',
  'accounts.apitoken': 'apiToken',
  'accounts.user': 'user',
  'quotas.quota': 'quota',
  'clusters.cluster': 'cluster',
  'clusters.resourcepool': 'pool',
  'clusters.node': 'node',
  'health.alertreceiver': 'alertReceiver',
  'health.faultrule': 'faultRule',
  'inference.inferenceservice': 'inferenceService',
  'runs.run': 'run',
} as const;

function isKnownType(type: string): type is keyof typeof OBJECT_TYPES {
  return Object.hasOwn(OBJECT_TYPES, type);
}

/** One page of the audit log, newest first: the tenant's part, or all of it (`tenant` null,
 * platform admins). */
function useAudit(tenant: string | null, filters: AuditFilters, cursor: string | undefined) {
  return useQuery({
    queryKey: ['audit', tenant, { ...filters, cursor }],
    queryFn: ({ signal }) => {
      const query = { ...filters, page_size: AUDIT_PAGE, cursor };
      return unwrap(
        tenant === null
          ? api.GET('/api/v1/audit/', { params: { query }, signal })
          : api.GET('/api/v1/tenants/{tenant}/audit/', {
              params: { path: { tenant }, query },
              signal,
            }),
      );
    },
    placeholderData: keepPreviousData,
  });
}

/** Who changed what and when: the append-only audit log, with each change's fields. */
export function AuditLog({ tenant }: { tenant: string | null }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const [filters, setFilters] = useState<AuditFilters>({});
  const pages = useCursorPages(`${tenant ?? ''} ${JSON.stringify(filters)}`);
  const entries = useAudit(tenant, filters, pages.cursor);
  return (
    <Space orientation="vertical" size={12} style={{ width: '100%' }}>
      <Space wrap>
        <Select<Action>
          allowClear
          aria-label={t('audit.action')}
          placeholder={t('audit.anyAction')}
          style={{ width: 160 }}
          value={filters.action}
          onChange={(action) => {
            setFilters((f) => ({ ...f, action }));
          }}
          options={ACTIONS.map((a) => ({ value: a, label: t(`audit.action_${a}`) }))}
        />
        <NameSearch
          label={t('audit.actorSearch')}
          onSearch={(actor) => {
            setFilters((f) => ({ ...f, actor_name: actor }));
          }}
        />
      </Space>
      <QueryTable<AuditEntry>
        rowKey="id"
        size="small"
        data-testid="audit-table"
        query={entries}
        pagination={false}
        rows={entries.data?.results ?? []}
        locale={{ emptyText: <Empty description={t('audit.empty')} /> }}
        expandable={{
          expandedRowRender: (entry) => (
            <Table
              rowKey="key"
              size="small"
              pagination={false}
              data-testid={`audit-changes-${entry.id}`}
              dataSource={changedFields(entry)}
              locale={{ emptyText: t('audit.noChanges') }}
              columns={[
                { title: t('audit.field'), dataIndex: 'key' },
                { title: t('audit.before'), dataIndex: 'before' },
                { title: t('audit.after'), dataIndex: 'after' },
              ]}
            />
          ),
        }}
        columns={[
          {
            title: t('audit.when'),
            dataIndex: 'created_at',
            render: (at: string) => formatDateTime(at, language),
          },
          { title: t('audit.actor'), dataIndex: 'actor_name' },
          {
            title: t('audit.action'),
            dataIndex: 'action',
            render: (a: Action) => <Tag color={ACTION_COLOR[a]}>{t(`audit.action_${a}`)}</Tag>,
          },
          {
            title: t('audit.object'),
            key: 'object',
            render: (_, entry) => (
              <Space size={4}>
                <Typography.Text type="secondary" title={entry.object_type}>
                  {isKnownType(entry.object_type)
                    ? t(`audit.objectType.${OBJECT_TYPES[entry.object_type]}`)
                    : entry.object_type}
                </Typography.Text>
                <span>{entry.object_repr || `#${entry.object_id}`}</span>
              </Space>
            ),
          },
          ...(tenant === null
            ? [
                {
                  title: t('audit.tenant'),
                  dataIndex: 'tenant',
                  render: (slug: string | null) => slug ?? '—',
                },
              ]
            : []),
        ]}
      />
      <CursorPager pages={pages} query={entries} testId="audit-page" size="small" />
    </Space>
  );
}
