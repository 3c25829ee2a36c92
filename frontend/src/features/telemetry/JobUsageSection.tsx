import { useQuery } from '@tanstack/react-query';
import { Card, Col, Row, Skeleton, Statistic, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { api, unwrap } from '../../lib/api';
import { useCurrency } from '../auth/api';
import { formatMoney, formatNumber } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { TelemetryHistoryCard } from './TelemetryHistoryCard';

/**
 * What a job's GPUs cost and did: the GPU-hours it reserved and their price (accounting),
 * the collector's measured totals (GPU-hours, mean utilization and power, energy, peak
 * memory), then its utilization and GPUs over time. `live`: the job holds GPUs now, so the
 * totals still grow.
 */
export function JobUsageSection({
  tenant,
  jobId,
  live,
}: {
  tenant: string;
  jobId: number;
  live: boolean;
}) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const currency = useCurrency();
  const cost = useQuery({
    queryKey: ['jobs', tenant, jobId, 'cost'],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/jobs/{id}/cost/', {
          params: { path: { tenant, id: jobId } },
          signal,
        }),
      ),
    refetchInterval: live ? 30_000 : false,
  });
  const usage = useQuery({
    queryKey: ['telemetry', 'job-usage', jobId],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/telemetry/jobs/{job_id}/usage/', {
          params: { path: { job_id: jobId } },
          signal,
        }),
      ),
    refetchInterval: live ? 10_000 : false,
  });
  const stat = (id: string, title: string, value: string) => (
    <Col xs={12} md={8} xl={4} key={id}>
      <Statistic title={title} value={value} data-testid={`usage-${id}`} />
    </Col>
  );
  const n = (value: number, digits = 1) => formatNumber(value, language, digits);
  let billing;
  if (cost.isPending) billing = <Skeleton active paragraph={{ rows: 1 }} />;
  else if (cost.isError)
    billing = <QueryErrorResult error={cost.error} onRetry={() => void cost.refetch()} />;
  else {
    const c = cost.data;
    billing = (
      <Row gutter={[16, 16]} style={{ marginBottom: 16 }}>
        {stat('reserved', t('telemetry.reservedHours'), n(c.device_hours, 2))}
        {stat('cost', t('telemetry.cost'), formatMoney(Number(c.cost), language, currency))}
        {stat(
          'price',
          t('telemetry.price'),
          formatMoney(Number(c.price_per_device_hour), language, currency, 4),
        )}
      </Row>
    );
  }
  let body;
  if (usage.isPending) body = <Skeleton active paragraph={{ rows: 1 }} />;
  else if (usage.isError)
    body = <QueryErrorResult error={usage.error} onRetry={() => void usage.refetch()} />;
  else {
    const u = usage.data;
    body = (
      <>
        <Row gutter={[16, 16]}>
          {stat('gpu-hours', t('telemetry.gpuHours'), n(u.gpu_hours, 2))}
          {stat('util', t('telemetry.meanUtil'), `${n(u.mean_util)} %`)}
          {stat('power', t('telemetry.meanPower'), `${n(u.mean_power_w, 0)} W`)}
          {stat('energy', t('telemetry.energy'), `${n(u.energy_kwh, 2)} kWh`)}
          {stat('memory', t('telemetry.peakMemory'), `${n(u.fb_used_peak_mib / 1024)} GiB`)}
        </Row>
        <Typography.Paragraph type="secondary" style={{ marginTop: 12, marginBottom: 0 }}>
          {t('telemetry.usageNote')}
        </Typography.Paragraph>
      </>
    );
  }
  return (
    <>
      <Card title={t('telemetry.usageCost')} style={{ marginTop: 16 }} data-testid="job-usage">
        {billing}
        {body}
      </Card>
      <div style={{ marginTop: 16 }}>
        <TelemetryHistoryCard
          series={`job:${jobId}`}
          title={t('telemetry.usage')}
          testId="job-history"
        />
      </div>
    </>
  );
}
