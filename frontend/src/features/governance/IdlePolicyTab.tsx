import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  App,
  Button,
  Card,
  Col,
  Empty,
  Form,
  Row,
  Segmented,
  Skeleton,
  Space,
  Statistic,
  Tag,
} from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { CursorPager } from '../../components/CursorPager';
import { FormModal } from '../../components/FormModal';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { QueryTable } from '../../components/QueryTable';
import { api, unwrap, type ApiError } from '../../lib/api';
import { useCursorPages } from '../../lib/cursorPages';
import { formatDateTime, formatDuration, formatNumber } from '../../lib/format';
import { applyServerErrors } from '../../lib/formErrors';
import { currentLanguage } from '../../lib/i18n';
import type { IdleFlag, TenantPolicy } from '../../lib/apiTypes';
import { governanceKeys, useTenantPolicy } from './api';
import { type PolicyNumber, PolicyFormItems, PolicySummary } from './policyFields';

type Effective = TenantPolicy['effective'];
type PolicyForm = Omit<Effective, 'webhook_url'> & { webhook_url?: string };

const FLAG_PAGE = 20;
const FLAG_COLOR: Record<IdleFlag['state'], string> = {
  warned: 'orange',
  extended: 'gold',
  stopped: 'red',
  cleared: 'green',
  exempt: 'blue',
};

/**
 * Settings > Idle GPUs: the idle policy the sweep applies to the tenant (members read it,
 * tenant admins tighten it), the tenant's idle flags, and, for tenant admins, what the
 * governance did over the last 30 days (reserved against used GPU-hours, what it reclaimed).
 */
export function IdlePolicyTab({ tenant, isAdmin }: { tenant: string; isAdmin: boolean }) {
  return (
    <Space orientation="vertical" size={16} style={{ width: '100%' }}>
      {isAdmin && <Efficiency tenant={tenant} />}
      <Policy tenant={tenant} isAdmin={isAdmin} />
      <Flags tenant={tenant} />
    </Space>
  );
}

function Efficiency({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const report = useQuery({
    queryKey: [...governanceKeys.all(tenant), 'efficiency'],
    // The server's default window: the last 30 days up to now.
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/governance/efficiency/', {
          params: { path: { tenant } },
          signal,
        }),
      ),
  });
  let body;
  if (report.isPending) body = <Skeleton active paragraph={{ rows: 1 }} />;
  else if (report.isError)
    body = <QueryErrorResult error={report.error} onRetry={() => void report.refetch()} />;
  else {
    const r = report.data;
    const n = (v: number) => formatNumber(v, language, 1);
    const stats: [
      'reserved' | 'used' | 'unknown' | 'utilization' | 'reclaimed' | 'stopped' | 'expired',
      string,
    ][] = [
      ['reserved', n(r.reserved_gpu_hours)],
      ['used', n(r.used_gpu_hours)],
      ['unknown', n(r.unknown_util_gpu_hours)],
      ['utilization', r.utilization_pct === null ? '—' : `${n(r.utilization_pct)} %`],
      ['reclaimed', n(r.idle_reclaimed_gpu_hours)],
      ['stopped', String(r.jobs_stopped_idle)],
      ['expired', String(r.jobs_expired_in_queue)],
    ];
    body = (
      <Row gutter={[16, 16]}>
        {stats.map(([id, value]) => (
          <Col xs={12} md={8} xl={6} key={id}>
            <Statistic title={t(`idle.eff_${id}`)} value={value} data-testid={`efficiency-${id}`} />
          </Col>
        ))}
      </Row>
    );
  }
  return (
    <Card size="small" title={t('idle.efficiency')} data-testid="idle-efficiency">
      {body}
    </Card>
  );
}

function Policy({ tenant, isAdmin }: { tenant: string; isAdmin: boolean }) {
  const { t } = useTranslation();
  const policy = useTenantPolicy(tenant);
  const [editing, setEditing] = useState(false);
  if (policy.isPending) return <Skeleton active />;
  if (policy.isError)
    return <QueryErrorResult error={policy.error} onRetry={() => void policy.refetch()} />;
  const { effective, default: platform, customized } = policy.data;
  return (
    <Card
      size="small"
      title={
        <Space>
          {t('idle.policy')}
          <Tag color={customized ? 'blue' : 'default'} data-testid="policy-origin">
            {customized ? t('idle.customized') : t('idle.platformDefault')}
          </Tag>
        </Space>
      }
      extra={
        isAdmin && (
          <Button
            size="small"
            onClick={() => {
              setEditing(true);
            }}
            data-testid="edit-policy"
          >
            {t('idle.edit')}
          </Button>
        )
      }
    >
      <PolicySummary policy={effective} webhook testId="idle-policy" />
      {editing && (
        <PolicyModal
          tenant={tenant}
          effective={effective}
          platform={platform}
          onClose={() => {
            setEditing(false);
          }}
        />
      )}
    </Card>
  );
}

function PolicyModal({
  tenant,
  effective,
  platform,
  onClose,
}: {
  tenant: string;
  effective: Effective;
  platform: TenantPolicy['default'];
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const client = useQueryClient();
  const [form] = Form.useForm<PolicyForm>();
  const save = useMutation<TenantPolicy, ApiError, PolicyForm>({
    mutationFn: (body) =>
      unwrap(
        api.PATCH('/api/v1/tenants/{tenant}/governance/policy/', {
          params: { path: { tenant } },
          body,
        }),
      ),
    onSuccess: (saved) => {
      client.setQueryData(governanceKeys.policy(tenant), saved);
      void message.success(t('idle.saved'));
      onClose();
    },
    onError: (error) => {
      const known = Object.keys(effective).map((k) => [k]);
      const { unmatched } = applyServerErrors(form, error, known);
      if (unmatched.length > 0) void message.error(unmatched.join(' '));
    },
  });
  // The platform default is the loosest a tenant may set: say it beside each field.
  const loosest = (key: PolicyNumber) => {
    const value = platform[key];
    if (typeof value !== 'number') return undefined;
    const shown =
      key === 'util_threshold_pct'
        ? `${value} %`
        : key === 'max_extensions'
          ? String(value)
          : formatDuration(value, currentLanguage());
    return t('idle.defaultIs', { value: shown });
  };
  return (
    <FormModal
      title={t('idle.editTitle')}
      okText={t('idle.save')}
      form={form}
      pending={save.isPending}
      onClose={onClose}
    >
      <Form<PolicyForm>
        form={form}
        layout="vertical"
        initialValues={effective}
        onFinish={(values) => {
          save.mutate(values);
        }}
      >
        <PolicyFormItems webhook hint={loosest} />
      </Form>
    </FormModal>
  );
}

function Flags({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const [show, setShow] = useState<'active' | 'all'>('active');
  const pages = useCursorPages(`${tenant}:${show}`);
  const cursor = pages.cursor;
  const flags = useQuery({
    queryKey: [...governanceKeys.all(tenant), 'flags', show, cursor],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/governance/flags/', {
          params: {
            path: { tenant },
            query: {
              page_size: FLAG_PAGE,
              cursor,
              state: show === 'active' ? ['warned', 'extended'] : undefined,
            },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: 30_000,
  });
  return (
    <Card
      size="small"
      title={t('idle.flags')}
      extra={
        <Segmented<'active' | 'all'>
          size="small"
          aria-label={t('idle.flagsShown')}
          value={show}
          onChange={setShow}
          options={[
            { value: 'active', label: t('idle.active') },
            { value: 'all', label: t('idle.all') },
          ]}
        />
      }
    >
      <QueryTable<IdleFlag>
        rowKey="id"
        size="small"
        data-testid="idle-flags"
        query={flags}
        pagination={false}
        rows={flags.data?.results ?? []}
        locale={{ emptyText: <Empty description={t('idle.noFlags')} /> }}
        columns={[
          {
            title: t('idle.job'),
            key: 'job',
            render: (_, f) => <Link to={`/jobs/${f.job}`}>{`${f.job_name} (#${f.job})`}</Link>,
          },
          {
            title: t('idle.state'),
            dataIndex: 'state',
            render: (s: IdleFlag['state']) => (
              <Tag color={FLAG_COLOR[s]}>{t(`idle.flag_${s}`)}</Tag>
            ),
          },
          {
            title: t('idle.idleSince'),
            dataIndex: 'idle_since',
            render: (v: string | null) => formatDateTime(v, language),
          },
          {
            title: t('idle.peak'),
            dataIndex: 'peak_util_pct',
            render: (v: number | null) => (v === null ? '—' : `${v.toFixed(1)} %`),
          },
          {
            title: t('idle.stopAt'),
            key: 'stop',
            render: (_, f) => formatDateTime(f.stopped_at ?? f.stop_at, language),
          },
          { title: t('idle.extensions'), dataIndex: 'extensions_used' },
        ]}
      />
      <CursorPager pages={pages} query={flags} testId="idle-flags" size="small" />
    </Card>
  );
}
