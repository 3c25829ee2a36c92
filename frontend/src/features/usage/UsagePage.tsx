import { DownloadOutlined } from '@ant-design/icons';
import {
  Alert,
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
import { ApiError } from '../../lib/api';
import { formatMoney, formatNumber, formatShare } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { useCurrency } from '../auth/api';
import { useTenant } from '../tenancy/useTenant';
import { useUsage, useUsageOverTime } from './api';
import {
  bucketCost,
  bucketLabels,
  buckets,
  csvUrl,
  GROUPS,
  type GroupBy,
  MAX_REPORT_DAYS,
  rangeTooLong,
  type Scope,
  stackSeries,
  type UsageRow,
} from './usageData';

const UsageChart = lazy(() => import('./UsageChart').then((m) => ({ default: m.UsageChart })));

const DATE = 'YYYY-MM-DD';
// A filter label above its control when the phone is too narrow for both on one line.
const FIELD = {
  display: 'inline-flex',
  flexWrap: 'wrap',
  gap: 8,
  alignItems: 'center',
  maxWidth: '100%',
} as const;
// A long amount or name wraps inside its card instead of widening a phone's page.
const WRAP = { content: { overflowWrap: 'anywhere' } } as const;
const DEFAULT_DAYS = 14;
const TOP_GROUPS = 8;

/** What went wrong, as the server said it: its field errors (a 400's detail is only
 * "Invalid input."), else its detail. */
function errorText(error: Error): string {
  return error instanceof ApiError ? error.summary : error.message;
}

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
  // The server rounds each row's cost so that the rows of any grouping add up to the same
  // total (largest remainder), so summing them here gives one total whatever the grouping.
  const totalHours = rows.reduce((sum, r) => sum + r.device_hours, 0);
  const totalCost = rows.reduce((sum, r) => sum + Number(r.cost), 0);
  // A failed report has no total: "—", never 0 (the error is said above the cards).
  const known = !totals.isPending && !totals.isError;
  const tooLong = rangeTooLong(start, end);
  const perBucket = overTime.map((q) => q.data ?? []);
  const labels = bucketLabels(bins);
  const scopeName = scope === 'platform' ? t('usage.allTenants') : (tenantName ?? tenant ?? '');

  return (
    <>
      <PageHeader
        title={t('usage.title')}
        subtitle={t('usage.subtitle')}
        extra={
          // No link to a report the server would refuse: the range must be valid.
          <Button
            icon={<DownloadOutlined />}
            disabled={tooLong || totals.isError}
            href={
              tooLong || totals.isError ? undefined : csvUrl(scope, tenant, groupBy, start, end)
            }
            download={!tooLong && !totals.isError}
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
          <label style={FIELD}>
            {t('usage.range')}
            <DatePicker.RangePicker
              aria-label={t('usage.range')}
              allowClear={false}
              value={[from, to]}
              style={{ maxWidth: '100%' }}
              // The server reports on MAX_REPORT_DAYS days at most (both ends inclusive here).
              disabledDate={(day, info) =>
                day.isAfter(today.add(1, 'day')) ||
                (info.from !== undefined &&
                  Math.abs(day.diff(info.from, 'day')) > MAX_REPORT_DAYS - 1)
              }
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
          <label style={FIELD}>
            {t('usage.groupBy')}
            <Select<GroupBy>
              aria-label={t('usage.groupBy')}
              style={{ width: 180, maxWidth: '100%' }}
              value={groupBy}
              onChange={(value) => {
                update({ group: value });
              }}
              options={groups.map((g) => ({ value: g, label: t(`usage.group.${g}`) }))}
            />
          </label>
        </Space>
      </Card>
      {tooLong ? (
        <Alert
          type="error"
          showIcon
          style={{ marginBottom: 16 }}
          title={t('usage.rangeTooLong', { days: MAX_REPORT_DAYS })}
          data-testid="usage-range-error"
        />
      ) : (
        totals.isError && (
          <Alert
            type="error"
            showIcon
            style={{ marginBottom: 16 }}
            title={t('usage.totalsFailed', { error: errorText(totals.error) })}
            data-testid="usage-error"
          />
        )
      )}
      <Row gutter={[16, 16]} style={{ marginBottom: 16 }}>
        <Col xs={24} md={8}>
          <Card size="small">
            <Statistic
              title={t('usage.scopeLabel')}
              value={scopeName}
              styles={WRAP}
              data-testid="usage-scope"
            />
          </Card>
        </Col>
        <Col xs={12} md={8}>
          <Card size="small">
            <Statistic
              styles={WRAP}
              title={t('usage.totalHours')}
              value={known ? formatNumber(totalHours, language, 2) : '—'}
              data-testid="usage-total-hours"
            />
          </Card>
        </Col>
        <Col xs={12} md={8}>
          <Card size="small">
            <Statistic
              styles={WRAP}
              title={t('usage.totalCost')}
              value={known ? formatMoney(totalCost, language, currency) : '—'}
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
          // On a phone a wide table scrolls inside itself, not the page.
          scroll={{ x: 'max-content' }}
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
