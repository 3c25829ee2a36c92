import { DownloadOutlined } from '@ant-design/icons';
import {
  Button,
  Card,
  Col,
  DatePicker,
  Empty,
  Row,
  Segmented,
  Select,
  Skeleton,
  Space,
  Statistic,
} from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { lazy, Suspense } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { NoticeResult } from '../../components/NoTenantResult';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { QueryTable } from '../../components/QueryTable';
import { formatMoney, formatNumber, formatShare } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { useCurrency } from '../auth/api';
import { useTenant } from '../tenancy/useTenant';
import { useUsage, useUsageOverTime } from './api';
import {
  bucketCost,
  buckets,
  csvUrl,
  GROUPS,
  type GroupBy,
  type Scope,
  stackSeries,
  type UsageRow,
} from './usageData';

const UsageChart = lazy(() => import('./UsageChart').then((m) => ({ default: m.UsageChart })));

const DATE = 'YYYY-MM-DD';
const DEFAULT_DAYS = 14;
const TOP_GROUPS = 8;

function parseDay(value: string | null): Dayjs | null {
  if (value === null) return null;
  const day = dayjs(value);
  return day.isValid() && /^\d{4}-\d{2}-\d{2}$/.test(value) ? day.startOf('day') : null;
}

/** /usage?scope=tenant|platform&group=project&from=YYYY-MM-DD&to=YYYY-MM-DD (days inclusive). */
export function UsagePage() {
  const { t } = useTranslation();
  const tenant = useTenant();
  const canTenant = tenant.slug !== null && tenant.isTenantAdmin;
  if (!canTenant && !tenant.isPlatformAdmin) {
    return (
      <>
        <PageHeader title={t('usage.title')} subtitle={t('usage.subtitle')} />
        <NoticeResult
          status="info"
          title={t('usage.adminsOnly')}
          subTitle={t('usage.adminsOnlyHint')}
          testId="usage-forbidden"
        />
      </>
    );
  }
  return (
    <UsageReport
      tenant={canTenant ? tenant.slug : null}
      tenantName={tenant.name}
      platform={tenant.isPlatformAdmin}
    />
  );
}

function UsageReport({
  tenant,
  tenantName,
  platform,
}: {
  tenant: string | null;
  tenantName: string | null;
  platform: boolean;
}) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const currency = useCurrency();
  const [params, setParams] = useSearchParams();

  const scope: Scope =
    tenant === null || (platform && params.get('scope') === 'platform') ? 'platform' : 'tenant';
  const groupParam = params.get('group') as GroupBy | null;
  const groups = GROUPS.filter((g) => scope === 'platform' || g !== 'tenant');
  const groupBy: GroupBy =
    groupParam !== null && groups.includes(groupParam)
      ? groupParam
      : scope === 'platform'
        ? 'tenant'
        : 'project';
  const today = dayjs().startOf('day');
  const to = parseDay(params.get('to')) ?? today;
  const fromParam = parseDay(params.get('from'));
  const from =
    fromParam !== null && !fromParam.isAfter(to) ? fromParam : to.subtract(DEFAULT_DAYS - 1, 'day');
  const fromKey = from.format(DATE);
  const toKey = to.format(DATE);

  // Day boundaries in the reader's time zone; the end is exclusive (the day after `to`).
  const start = dayjs(fromKey).toDate();
  const end = dayjs(toKey).add(1, 'day').toDate();
  const bins = buckets(start, end);

  const update = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) next.delete(key);
      else next.set(key, value);
    }
    setParams(next, { replace: true });
  };

  const query = { scope, tenant, groupBy };
  const totals = useUsage(query, start, end);
  const overTime = useUsageOverTime(query, bins);
  const chartError = overTime.find((q) => q.isError)?.error;
  const chartPending = overTime.some((q) => q.isPending);

  const rows = totals.data ?? [];
  const totalHours = rows.reduce((sum, r) => sum + r.device_hours, 0);
  const totalCost = rows.reduce((sum, r) => sum + Number(r.cost), 0);
  const perBucket = overTime.map((q) => q.data ?? []);
  const labels = bins.map((b) => {
    const first = dayjs(b.start);
    const last = dayjs(b.end).subtract(1, 'day');
    return last.isAfter(first, 'day')
      ? `${first.format('MM-DD')}–${last.format('MM-DD')}`
      : first.format('MM-DD');
  });
  const scopeName = scope === 'platform' ? t('usage.allTenants') : (tenantName ?? tenant ?? '');

  return (
    <>
      <PageHeader
        title={t('usage.title')}
        subtitle={t('usage.subtitle')}
        extra={
          <Button
            icon={<DownloadOutlined />}
            href={csvUrl(scope, tenant, groupBy, start, end)}
            download
            data-testid="usage-export"
          >
            {t('usage.export')}
          </Button>
        }
      />
      <Card style={{ marginBottom: 16 }}>
        <Space wrap size={16}>
          {platform && tenant !== null && (
            <Segmented<Scope>
              aria-label={t('usage.scope')}
              value={scope}
              onChange={(value) => {
                update({ scope: value === 'platform' ? 'platform' : null, group: null });
              }}
              options={[
                { value: 'tenant', label: t('usage.myTenant') },
                { value: 'platform', label: t('usage.allTenants') },
              ]}
            />
          )}
          <label style={{ display: 'inline-flex', gap: 8, alignItems: 'center' }}>
            {t('usage.range')}
            <DatePicker.RangePicker
              aria-label={t('usage.range')}
              allowClear={false}
              value={[from, to]}
              disabledDate={(day) => day.isAfter(today.add(1, 'day'))}
              presets={[7, 30, 90].map((days) => ({
                label: t('usage.lastDays', { count: days }),
                value: [today.subtract(days - 1, 'day'), today] as [Dayjs, Dayjs],
              }))}
              onChange={(value) => {
                const [a, b] = value ?? [];
                if (a && b) update({ from: a.format(DATE), to: b.format(DATE) });
              }}
            />
          </label>
          <label style={{ display: 'inline-flex', gap: 8, alignItems: 'center' }}>
            {t('usage.groupBy')}
            <Select<GroupBy>
              aria-label={t('usage.groupBy')}
              style={{ width: 180 }}
              value={groupBy}
              onChange={(value) => {
                update({ group: value });
              }}
              options={groups.map((g) => ({ value: g, label: t(`usage.group.${g}`) }))}
            />
          </label>
        </Space>
      </Card>
      <Row gutter={[16, 16]} style={{ marginBottom: 16 }}>
        <Col xs={24} md={8}>
          <Card size="small">
            <Statistic title={t('usage.scopeLabel')} value={scopeName} data-testid="usage-scope" />
          </Card>
        </Col>
        <Col xs={12} md={8}>
          <Card size="small">
            <Statistic
              title={t('usage.totalHours')}
              value={totals.isPending ? '—' : formatNumber(totalHours, language, 2)}
              data-testid="usage-total-hours"
            />
          </Card>
        </Col>
        <Col xs={12} md={8}>
          <Card size="small">
            <Statistic
              title={t('usage.totalCost')}
              value={totals.isPending ? '—' : formatMoney(totalCost, language, currency)}
              data-testid="usage-total-cost"
            />
          </Card>
        </Col>
      </Row>
      <Card title={t('usage.overTime')} style={{ marginBottom: 16 }}>
        {chartError ? (
          <QueryErrorResult
            error={chartError}
            onRetry={() => {
              for (const q of overTime) if (q.isError) void q.refetch();
            }}
          />
        ) : chartPending ? (
          <Skeleton.Node active style={{ width: '100%', height: 340 }} />
        ) : perBucket.every((r) => r.length === 0) ? (
          <Empty description={t('usage.empty')} />
        ) : (
          <Suspense fallback={<Skeleton.Node active style={{ width: '100%', height: 340 }} />}>
            <UsageChart
              labels={labels}
              series={stackSeries(perBucket, TOP_GROUPS, t('usage.other')).map((series) =>
                series.name === '' ? { ...series, name: t('usage.none') } : series,
              )}
              cost={perBucket.map(bucketCost)}
              hoursName={t('usage.hours')}
              costName={`${t('usage.cost')} (${currency})`}
              label={t('usage.chartLabel', { group: t(`usage.group.${groupBy}`) })}
            />
          </Suspense>
        )}
      </Card>
      <Card title={t('usage.byGroup', { group: t(`usage.group.${groupBy}`) })}>
        <QueryTable<UsageRow>
          data-testid="usage-table"
          size="small"
          rowKey="key"
          query={totals}
          rows={rows}
          pagination={{ pageSize: 20, hideOnSinglePage: true }}
          locale={{ emptyText: <Empty description={t('usage.empty')} /> }}
          columns={[
            {
              title: t(`usage.group.${groupBy}`),
              dataIndex: 'key',
              render: (key: string) => (key === '' ? t('usage.none') : key),
            },
            {
              title: t('usage.hours'),
              dataIndex: 'device_hours',
              align: 'right',
              render: (h: number) => formatNumber(h, language, 2),
            },
            {
              title: t('usage.share'),
              key: 'share',
              align: 'right',
              render: (_, r) => formatShare(r.device_hours, totalHours, language),
            },
            {
              title: t('usage.cost'),
              dataIndex: 'cost',
              align: 'right',
              render: (c: string) => formatMoney(Number(c), language, currency),
            },
          ]}
        />
      </Card>
    </>
  );
}
