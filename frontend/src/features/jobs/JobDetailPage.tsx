import {
  ArrowLeftOutlined,
  CopyOutlined,
  NodeIndexOutlined,
  StopOutlined,
} from '@ant-design/icons';
import {
  Alert,
  App,
  Button,
  Card,
  Col,
  Descriptions,
  Empty,
  Popconfirm,
  Row,
  Skeleton,
  Table,
  Tag,
  Timeline,
  Typography,
} from 'antd';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { JobStateTag } from '../../components/JobStateTag';
import { ACTIVE_STATES, keepsFiles } from '../../lib/jobStates';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import type { Allocation, Job, JobEvent } from '../../lib/apiTypes';
import { formatDateTime, formatDuration } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { canFollow, devicesLabel, WAITING_ON_GPUS } from './helpers';
import { useJob, useJobAction, useJobEvents, usePools } from './api';
import { JobLogsPanel } from './JobLogs';
import { EventDetail, StateReason } from './JobReasons';
import { schedulerText } from './schedulerText';
import { reasonLabel } from './reasons';
import { JobRunSection } from './JobRunSection';
import { PoolNow } from './PoolNow';
import { ExpectedStart } from './ExpectedStart';
import { JobPipelineCard } from './JobPipelineCard';
import { JobGpuHistoryButton } from './JobGpuHistoryButton';
import { ExemptJobButton, IdleFlagAlert } from '../governance/IdleFlagAlert';
import { NotebookFileActions } from '../notebooks/NotebookFiles';
import { useProjects } from '../projects/api';
import { useTenant } from '../tenancy/useTenant';
import { JobUsageSection } from '../telemetry/JobUsageSection';

// States in which a job's processes run and write logs and metrics: poll those.
const LIVE_STATES: Job['state'][] = ['dispatching', 'running', 'restarting'];

const STATE_COLOR: Record<string, string> = {
  running: 'green',
  succeeded: 'green',
  failed: 'red',
  cancelled: 'gray',
  preempted: 'orange',
  queued: 'gold',
};

function listOf(value: unknown): string {
  if (Array.isArray(value)) {
    return value
      .map((v) => (Array.isArray(v) ? `${String(v[0])}@${Number(v[1]) / 1000}` : String(v)))
      .join(', ');
  }
  return '';
}

/** Jobs linked by `after`, each a link with its state now. */
function LinkedJobs({ jobs, testId }: { jobs: Job['after_jobs']; testId: string }) {
  return (
    <>
      {jobs.map((linked) => (
        <span key={linked.id} data-testid={testId} style={{ marginRight: 8 }}>
          <Link to={`/jobs/${linked.id}`}>
            #{linked.id} {linked.name}
          </Link>{' '}
          <JobStateTag state={linked.state} />
        </span>
      ))}
    </>
  );
}

export function JobDetailPage({ tenant, canWrite }: { tenant: string; canWrite: boolean }) {
  const { t } = useTranslation();
  const params = useParams();
  const id = Number(params.id);
  if (!Number.isInteger(id) || id <= 0) {
    return <Empty description={t('jobs.notFound')} />;
  }
  return <JobDetail tenant={tenant} id={id} canWrite={canWrite} />;
}

function JobDetail({ tenant, id, canWrite }: { tenant: string; id: number; canWrite: boolean }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { message } = App.useApp();
  const job = useJob(tenant, id);
  const events = useJobEvents(tenant, id);
  const cancel = useJobAction(tenant, 'cancel');
  // Cancel is for the job's owner and tenant (or platform) admins; the server says 403 to others.
  const { mayCancel } = useTenant();
  const clone = useJobAction(tenant, 'clone');
  const pools = usePools();
  const projects = useProjects(tenant);
  const language = currentLanguage();

  if (job.isPending) return <Skeleton active paragraph={{ rows: 8 }} />;
  if (job.isError) {
    return <QueryErrorResult error={job.error} onRetry={() => void job.refetch()} />;
  }
  const data: Job = job.data;
  const active = ACTIVE_STATES.includes(data.state);
  const live = LIVE_STATES.includes(data.state);
  const poolName = pools.data?.find((p) => p.id === data.pool)?.name ?? `#${data.pool}`;

  return (
    <>
      <PageHeader
        title={t('jobDetail.title', { name: data.name, id: data.id })}
        subtitle={t(`jobKind.${data.kind}`)}
        extra={
          <>
            <Button icon={<ArrowLeftOutlined />} onClick={() => void navigate('/jobs')}>
              {t('jobDetail.back')}
            </Button>
            {canWrite && canFollow(data) && (
              <Button
                icon={<NodeIndexOutlined />}
                data-testid="submit-next-step"
                onClick={() => void navigate(`/jobs/new?after=${data.id}`)}
              >
                {t('jobDetail.nextStep')}
              </Button>
            )}
            {canWrite && (
              <Popconfirm
                title={t('jobDetail.cloneConfirm')}
                okText={t('jobDetail.clone')}
                cancelText={t('common.no')}
                onConfirm={() => {
                  clone.mutate(data.id, {
                    onSuccess: (copy) => {
                      void message.success(t('jobDetail.cloned', { id: copy.id }));
                      void navigate(`/jobs/${copy.id}`);
                    },
                    onError: (error) => void message.error(error.summary),
                  });
                }}
              >
                <Button icon={<CopyOutlined />} loading={clone.isPending}>
                  {t('jobDetail.clone')}
                </Button>
              </Popconfirm>
            )}
            {canWrite && active && mayCancel(data.owner) && (
              <Popconfirm
                title={t('jobDetail.cancelConfirm')}
                okText={t('jobDetail.cancel')}
                cancelText={t('common.no')}
                onConfirm={() => {
                  cancel.mutate(data.id, {
                    onError: (error) => void message.error(error.summary),
                  });
                }}
              >
                <Button danger icon={<StopOutlined />} loading={cancel.isPending}>
                  {t('jobDetail.cancel')}
                </Button>
              </Popconfirm>
            )}
            {canWrite &&
              active &&
              (data.kind === 'training' || data.kind === 'notebook') &&
              mayCancel(data.owner) && (
                <ExemptJobButton tenant={tenant} jobId={data.id} live={live} />
              )}
            {keepsFiles(data) && mayCancel(data.owner) && (
              <NotebookFileActions
                tenant={tenant}
                job={data}
                onRestarted={(restarted) => void navigate(`/jobs/${restarted.id}`)}
              />
            )}
          </>
        }
      />
      {(data.state === 'queued' || data.state === 'submitted' || data.pending_code !== '') &&
        active && (
          <Alert
            type="info"
            showIcon
            style={{ marginBottom: 16 }}
            data-testid="pending-reason"
            title={
              data.waiting_for_jobs
                ? t('jobDetail.waitingForJobs')
                : data.queue_position === null
                  ? t('jobDetail.pending')
                  : t('jobDetail.queuePosition', { position: data.queue_position })
            }
            description={
              <>
                {data.pending_code !== '' && (
                  <Tag data-testid="pending-code" data-code={data.pending_code}>
                    {t(`cluster.pending_${data.pending_code}`, { defaultValue: data.pending_code })}
                  </Tag>
                )}
                {data.pending_message !== ''
                  ? schedulerText(t, language, data.pending_detail, data.pending_message)
                  : t('jobDetail.pendingNoReason')}
                {data.state === 'queued' && <ExpectedStart job={data} />}
                {WAITING_ON_GPUS.has(data.pending_code) && (
                  <PoolNow pool={data.pool} model={data.accelerator_model ?? null} />
                )}
              </>
            }
          />
        )}
      {data.kind !== 'inference' && data.started_at !== null && (
        <IdleFlagAlert tenant={tenant} jobId={data.id} live={live} canWrite={canWrite} />
      )}
      <Row gutter={[16, 16]}>
        <Col xs={24} xl={14}>
          <Card title={t('jobDetail.summary')}>
            <Descriptions column={{ xs: 1, md: 2 }} size="small" data-testid="job-summary">
              <Descriptions.Item label={t('jobs.state')}>
                <JobStateTag state={data.state} />
              </Descriptions.Item>
              <Descriptions.Item label={t('jobs.priority')}>P{data.priority}</Descriptions.Item>
              <Descriptions.Item label={t('jobs.owner')}>{data.owner}</Descriptions.Item>
              <Descriptions.Item label={t('jobs.pool')}>{poolName}</Descriptions.Item>
              <Descriptions.Item label={t('projects.field')}>
                {data.project === null
                  ? '—'
                  : (projects.data?.find((p) => p.id === data.project)?.name ?? `#${data.project}`)}
              </Descriptions.Item>
              <Descriptions.Item label={t('submit.model')}>
                {data.accelerator_model ?? '—'}
              </Descriptions.Item>
              <Descriptions.Item label={t('jobs.accelerators')}>
                {devicesLabel(data)}
              </Descriptions.Item>
              <Descriptions.Item label={t('jobDetail.attempt')}>{data.attempt}</Descriptions.Item>
              <Descriptions.Item label={t('jobDetail.failures')}>
                {data.failures} / {data.max_retries}
              </Descriptions.Item>
              <Descriptions.Item label={t('jobDetail.runtimeLimit')}>
                {data.max_runtime_s ? formatDuration(data.max_runtime_s, language) : '—'}
              </Descriptions.Item>
              <Descriptions.Item label={t('jobs.submitted')}>
                {formatDateTime(data.submitted_at, language)}
              </Descriptions.Item>
              <Descriptions.Item label={t('jobDetail.started')}>
                {formatDateTime(data.started_at, language)}
              </Descriptions.Item>
              <Descriptions.Item label={t('jobDetail.finished')}>
                {formatDateTime(data.finished_at, language)}
              </Descriptions.Item>
              {data.kind === 'notebook' && data.home_job !== null && (
                <Descriptions.Item label={t('jobDetail.homeVolume')}>
                  <span data-testid="home-volume">
                    {data.home_job === data.id ? (
                      t('jobDetail.homeOwn')
                    ) : (
                      <Link to={`/jobs/${data.home_job}`}>#{data.home_job}</Link>
                    )}
                    {data.home_deleted_at !== null && (
                      <Typography.Text type="secondary">
                        {' '}
                        {t('jobDetail.homeDeleted', {
                          at: formatDateTime(data.home_deleted_at, language),
                        })}
                      </Typography.Text>
                    )}
                  </span>
                </Descriptions.Item>
              )}
              {data.trial !== null && (
                <Descriptions.Item label={t('jobDetail.trial')}>
                  <Link to={`/sweeps/${data.trial.sweep}`} data-testid="job-trial">
                    {t('jobDetail.trialOf', {
                      index: data.trial.index,
                      name: data.trial.sweep_name,
                    })}
                  </Link>
                </Descriptions.Item>
              )}
              {data.after_jobs.length > 0 && (
                <Descriptions.Item label={t('jobDetail.after')}>
                  <span data-testid="after-jobs">
                    <LinkedJobs jobs={data.after_jobs} testId="after-job" />
                    {data.released_at !== null && (
                      <Typography.Text type="secondary">
                        {t('jobDetail.afterReleased', {
                          at: formatDateTime(data.released_at, language),
                        })}
                      </Typography.Text>
                    )}
                  </span>
                </Descriptions.Item>
              )}
              {data.next_jobs.length > 0 && (
                <Descriptions.Item label={t('jobDetail.next')}>
                  <span data-testid="next-jobs">
                    <LinkedJobs jobs={data.next_jobs} testId="next-job" />
                  </span>
                </Descriptions.Item>
              )}
              <Descriptions.Item label={t('jobDetail.reason')}>
                <StateReason job={data} events={events.data} />
              </Descriptions.Item>
            </Descriptions>
          </Card>
          <Card title={t('jobDetail.replicas')} style={{ marginTop: 16 }}>
            <Table<Allocation>
              data-testid="allocations-table"
              size="small"
              pagination={false}
              rowKey={(a) => `${a.replica_group}-${a.replica_index}`}
              dataSource={data.allocations}
              locale={{ emptyText: <Empty description={t('jobDetail.noAllocations')} /> }}
              columns={[
                {
                  title: t('jobDetail.replica'),
                  key: 'replica',
                  render: (_, a) =>
                    // Room a rolling update holds for a new replica until it ends.
                    a.surge
                      ? t('jobDetail.surgeReplica', { group: a.replica_group })
                      : `${a.replica_group}-${a.replica_index}`,
                },
                { title: t('jobDetail.node'), dataIndex: 'node' },
                {
                  title: t('jobDetail.devices'),
                  key: 'devices',
                  render: (_, a) => (
                    <>
                      {listOf(a.devices) || listOf(a.shares) || '—'}
                      <JobGpuHistoryButton allocation={a} />
                    </>
                  ),
                },
              ]}
            />
          </Card>
        </Col>
        <Col xs={24} xl={10}>
          <Card title={t('jobDetail.timeline')}>
            {events.isPending ? (
              <Skeleton active />
            ) : events.isError ? (
              <QueryErrorResult error={events.error} onRetry={() => void events.refetch()} />
            ) : events.data.length === 0 ? (
              <Empty description={t('jobDetail.noEvents')} />
            ) : (
              <Timeline
                data-testid="job-timeline"
                items={events.data.map((e: JobEvent) => ({
                  color: STATE_COLOR[e.to_state] ?? 'blue',
                  content: (
                    <div>
                      <Typography.Text strong>
                        {e.to_state
                          ? t(`jobState.${e.to_state as Job['state']}`, {
                              defaultValue: e.to_state,
                            })
                          : reasonLabel(t, e.reason)}
                      </Typography.Text>{' '}
                      <Typography.Text type="secondary">
                        {formatDateTime(e.created_at, language)}
                      </Typography.Text>
                      <EventDetail event={e} />
                    </div>
                  ),
                }))}
              />
            )}
          </Card>
        </Col>
      </Row>
      {(data.after_jobs.length > 0 || data.next_jobs.length > 0) && (
        <JobPipelineCard tenant={tenant} job={data} />
      )}
      {data.requested_devices > 0 && data.started_at !== null && (
        <JobUsageSection tenant={tenant} jobId={data.id} live={live} />
      )}
      <JobRunSection
        tenant={tenant}
        jobId={data.id}
        live={live}
        running={data.kind === 'training' && data.state === 'running'}
        canWrite={canWrite}
      />
      <Card title={t('logs.title')} style={{ marginTop: 16 }}>
        <JobLogsPanel tenant={tenant} jobId={data.id} live={live} />
      </Card>
    </>
  );
}
