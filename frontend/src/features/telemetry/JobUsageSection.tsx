import { useQuery } from '@tanstack/react-query';
import { Card, Col, Row, Skeleton, Statistic, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { api, unwrap } from '../../lib/api';
import { formatNumber } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { TelemetryHistoryCard } from './TelemetryHistoryCard';

/**
 * What a job's GPUs did: the collector's running totals (GPU-hours, mean utilization and
 * power, energy, peak memory), then the job's utilization and GPUs over time. `live`: the
 * job holds GPUs now, so the totals still grow.
 */
export function JobUsageSection({ jobId, live }: { jobId: number; live: boolean }) {
  const { t } = useTranslation();
  const language = currentLanguage();
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
  let body;
  if (usage.isPending) body = <Skeleton active paragraph={{ rows: 1 }} />;
  else if (usage.isError)
    body = <QueryErrorResult error={usage.error} onRetry={() => void usage.refetch()} />;
  else {
    const u = usage.data;
    const n = (value: number, digits = 1) => formatNumber(value, language, digits);
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
      <Card title={t('telemetry.usage')} style={{ marginTop: 16 }} data-testid="job-usage">
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
