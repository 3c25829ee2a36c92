import { Card, Skeleton, theme, Tooltip, Typography, type GlobalToken } from 'antd';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { JobStateTag } from '../../components/JobStateTag';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import type { Job, PipelineJob } from '../../lib/apiTypes';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { JOB_STATE_COLORS, type JobStateColor } from '../../lib/jobStates';
import { usePipeline } from './api';
import { PipelineDiagram } from './PipelineDiagram';
import { boxFrame, type PlacedNode } from './pipelineLayout';

/** The box's left stripe: the colour of the job's state tag, from the theme's palette. */
const STRIPE: Record<JobStateColor, (token: GlobalToken) => string> = {
  default: (token) => token.colorTextQuaternary,
  processing: (token) => token.colorInfo,
  success: (token) => token.colorSuccess,
  error: (token) => token.colorError,
  gold: (token) => token.gold6,
  cyan: (token) => token.cyan6,
  geekblue: (token) => token.geekblue6,
  orange: (token) => token.orange6,
  purple: (token) => token.purple6,
};

/** The job's pipeline: the jobs it starts after and that start after it, drawn left to right. */
export function JobPipelineCard({ tenant, job }: { tenant: string; job: Job }) {
  const { t } = useTranslation();
  const pipeline = usePipeline(tenant, job);
  return (
    <Card title={t('pipeline.title')} style={{ marginTop: 16 }} data-testid="job-pipeline">
      {pipeline.isPending ? (
        <Skeleton active paragraph={{ rows: 2 }} />
      ) : pipeline.isError ? (
        <QueryErrorResult error={pipeline.error} onRetry={() => void pipeline.refetch()} />
      ) : (
        <>
          <PipelineGraph jobs={pipeline.data.jobs} current={job.id} />
          {pipeline.data.truncated && (
            <Typography.Text type="secondary" data-testid="pipeline-truncated">
              {t('pipeline.truncated', { count: pipeline.data.jobs.length })}
            </Typography.Text>
          )}
        </>
      )}
    </Card>
  );
}

function PipelineGraph({ jobs, current }: { jobs: PipelineJob[]; current: number }) {
  const { t } = useTranslation();
  const byId = new Map(jobs.map((job) => [job.id, job]));
  return (
    <PipelineDiagram
      nodes={jobs}
      label={t('pipeline.label')}
      renderNode={(node) => {
        const job = byId.get(node.id);
        return job === undefined ? null : (
          <JobBox key={node.id} job={job} node={node} current={node.id === current} />
        );
      }}
    />
  );
}

function JobBox({ job, node, current }: { job: PipelineJob; node: PlacedNode; current: boolean }) {
  const { t } = useTranslation();
  const { token } = theme.useToken();
  const language = currentLanguage();
  const when =
    job.finished_at !== null
      ? t('pipeline.finished', { at: formatDateTime(job.finished_at, language) })
      : job.started_at !== null
        ? t('pipeline.started', { at: formatDateTime(job.started_at, language) })
        : job.expected_start_at !== null
          ? t('pipeline.expectedStart', { at: formatDateTime(job.expected_start_at, language) })
          : t('pipeline.submitted', { at: formatDateTime(job.submitted_at, language) });
  const border = current ? token.colorPrimary : token.colorBorder;
  return (
    <Tooltip
      title={
        <div data-testid="pipeline-tooltip">
          <div>
            {job.name} (#{job.id}) · {t(`jobState.${job.state}`)}
          </div>
          <div>{t('pipeline.owner', { owner: job.owner ?? '—' })}</div>
          <div>{when}</div>
        </div>
      }
    >
      <Link
        to={`/jobs/${job.id}`}
        aria-current={current ? 'page' : undefined}
        data-testid="pipeline-job"
        data-job-id={job.id}
        data-state={job.state}
        style={{
          ...boxFrame(node),
          border: `${current ? 2 : 1}px solid ${border}`,
          borderLeft: `4px solid ${STRIPE[JOB_STATE_COLORS[job.state]](token)}`,
          borderRadius: token.borderRadius,
          background: current ? token.colorPrimaryBg : token.colorBgContainer,
          boxShadow: current ? token.boxShadowSecondary : undefined,
          color: token.colorText,
        }}
      >
        <Typography.Text strong ellipsis style={{ display: 'block' }}>
          {job.name}
        </Typography.Text>
        <span style={{ display: 'flex', alignItems: 'center', justifyContent: 'space-between' }}>
          <Typography.Text type="secondary">#{job.id}</Typography.Text>
          <JobStateTag state={job.state} />
        </span>
      </Link>
    </Tooltip>
  );
}
