import { Card, Empty, Skeleton } from 'antd';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { useJobRun } from '../experiments/api';
import { CheckpointsTable, RunCurves, RunKpiRow } from '../experiments/RunPanels';

/** A training job's run (if its code reports metrics): KPIs, curves and checkpoints. */
export function JobRunSection({
  tenant,
  jobId,
  live,
}: {
  tenant: string;
  jobId: number;
  live: boolean;
}) {
  const { t } = useTranslation();
  const run = useJobRun(tenant, jobId, live);
  let body;
  if (run.isPending) body = <Skeleton active />;
  else if (run.isError)
    body = <QueryErrorResult error={run.error} onRetry={() => void run.refetch()} />;
  else if (run.data === null)
    body = <Empty description={t('runs.noRun')} data-testid="job-no-run" />;
  else {
    body = (
      <>
        <RunKpiRow run={run.data} />
        <RunCurves tenant={tenant} run={run.data} live={live} />
      </>
    );
  }
  return (
    <>
      <Card
        title={t('runs.curves')}
        style={{ marginTop: 16 }}
        data-testid="job-curves"
        extra={
          run.data ? (
            <Link to={`/experiments/runs/${run.data.id}`}>
              {t('runs.openRun', { id: run.data.id })}
            </Link>
          ) : undefined
        }
      >
        {body}
      </Card>
      {run.data && (
        <Card title={t('runs.checkpoints')} style={{ marginTop: 16 }} data-testid="job-checkpoints">
          <CheckpointsTable tenant={tenant} runId={run.data.id} live={live} />
        </Card>
      )}
    </>
  );
}
