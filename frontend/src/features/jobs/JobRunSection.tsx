import { Card, Empty, Skeleton } from 'antd';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { useJobRun } from '../experiments/api';
import { CheckpointsTable, RunCurves, RunKpiRow } from '../experiments/RunPanels';
import { CheckpointRequestControl } from './CheckpointRequestControl';

/** A training job's run (if its code reports metrics): KPIs, curves and checkpoints. */
export function JobRunSection({
  tenant,
  jobId,
  live,
  running,
  canWrite,
}: {
  tenant: string;
  jobId: number;
  live: boolean;
  /** A running job can be asked for a checkpoint. */
  running: boolean;
  canWrite: boolean;
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
        <Card
          title={t('runs.checkpoints')}
          style={{ marginTop: 16 }}
          data-testid="job-checkpoints"
          extra={
            <CheckpointRequestControl
              tenant={tenant}
              jobId={jobId}
              runId={run.data.id}
              running={running}
              canWrite={canWrite}
            />
          }
        >
          <CheckpointsTable tenant={tenant} runId={run.data.id} live={live} />
        </Card>
      )}
    </>
  );
}
