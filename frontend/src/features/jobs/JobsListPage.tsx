import { ApartmentOutlined, PlusOutlined, ReloadOutlined } from '@ant-design/icons';
import { Button, Card, Checkbox, Empty, Select, Space, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { CursorPager } from '../../components/CursorPager';
import { NameSearch } from '../../components/NameSearch';
import { JobStateTag } from '../../components/JobStateTag';
import { PageHeader } from '../../components/PageHeader';
import { QueryTable } from '../../components/QueryTable';
import type { Job, JobKind, JobState } from '../../lib/apiTypes';
import { useCursorPages } from '../../lib/cursorPages';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { useSession } from '../auth/api';
import { usePools, useJobs, type JobFilters } from './api';
import { JOB_STATES, KINDS, PRIORITIES, devicesLabel } from './helpers';
import { ExpectedStart } from './ExpectedStart';
import { poolOptions } from '../../lib/poolOptions';

export function JobsListPage({ tenant, canWrite }: { tenant: string; canWrite: boolean }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const language = currentLanguage();
  const [filters, setFilters] = useState<JobFilters>({});
  const pages = useCursorPages(`${tenant} ${JSON.stringify(filters)}`);
  const jobs = useJobs(tenant, filters, pages.cursor);
  const me = useSession().data?.user.username;
  const pools = usePools();
  const poolName = (id: number) => pools.data?.find((p) => p.id === id)?.name ?? `#${id}`;

  const columns: ColumnsType<Job> = [
    {
      title: t('jobs.id'),
      dataIndex: 'id',
      width: 70,
      render: (id: number) => <Link to={`/jobs/${id}`}>#{id}</Link>,
    },
    {
      title: t('jobs.name'),
      dataIndex: 'name',
      render: (name: string, job) => (
        <>
          <Link to={`/jobs/${job.id}`} data-testid={`job-link-${job.id}`}>
            {name}
          </Link>
          {job.trial !== null && (
            // A sweep's trial: the sweep ranks it against the others.
            <Link to={`/sweeps/${job.trial.sweep}`} data-testid={`job-trial-${job.id}`}>
              <Tag style={{ marginLeft: 8 }}>
                {t('jobDetail.trialOf', { index: job.trial.index, name: job.trial.sweep_name })}
              </Tag>
            </Link>
          )}
        </>
      ),
    },
    { title: t('jobs.kind'), dataIndex: 'kind', render: (kind: JobKind) => t(`jobKind.${kind}`) },
    {
      title: t('jobs.state'),
      dataIndex: 'state',
      render: (state: JobState, job) => (
        <Space size={4}>
          <JobStateTag state={state} />
          {job.queue_position !== null && (
            <Typography.Text type="secondary">
              {t('jobs.queuePositionShort', { position: job.queue_position })}
            </Typography.Text>
          )}
          {state === 'queued' && <ExpectedStart job={job} compact />}
        </Space>
      ),
    },
    {
      title: t('jobs.priority'),
      dataIndex: 'priority',
      render: (p: number) => <Tag color={p <= 2 ? 'red' : p === 3 ? 'blue' : 'default'}>P{p}</Tag>,
    },
    { title: t('jobs.pool'), dataIndex: 'pool', render: poolName },
    { title: t('jobs.accelerators'), key: 'devices', render: (_, job) => devicesLabel(job) },
    { title: t('jobs.owner'), dataIndex: 'owner' },
    {
      title: t('jobs.submitted'),
      dataIndex: 'submitted_at',
      render: (at: string) => formatDateTime(at, language),
    },
  ];

  const setFilter = <K extends keyof JobFilters>(key: K, value: JobFilters[K] | undefined) => {
    setFilters((prev) => {
      // Unset filters are left out of the query (and of the cache key).
      const merged: Record<string, unknown> = { ...prev, [key]: value };
      return Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined));
    });
  };

  return (
    <>
      <PageHeader
        title={t('jobs.title')}
        subtitle={t('jobs.subtitle')}
        extra={
          <>
            <Button icon={<ReloadOutlined />} onClick={() => void jobs.refetch()}>
              {t('common.refresh')}
            </Button>
            {canWrite && (
              <Button
                icon={<ApartmentOutlined />}
                onClick={() => void navigate('/jobs/new-pipeline')}
              >
                {t('jobs.submitPipeline')}
              </Button>
            )}
            {canWrite && (
              <Button
                type="primary"
                icon={<PlusOutlined />}
                onClick={() => void navigate('/jobs/new')}
              >
                {t('jobs.submitTraining')}
              </Button>
            )}
          </>
        }
      />
      <Card>
        <Space wrap style={{ marginBottom: 16 }} aria-label={t('jobs.filters')}>
          <Select<JobState>
            allowClear
            aria-label={t('jobs.state')}
            placeholder={t('jobs.anyState')}
            style={{ width: 160 }}
            value={filters.state}
            onChange={(v) => {
              setFilter('state', v);
            }}
            options={JOB_STATES.map((s) => ({ value: s, label: t(`jobState.${s}`) }))}
          />
          <Select<JobKind>
            allowClear
            aria-label={t('jobs.kind')}
            placeholder={t('jobs.anyKind')}
            style={{ width: 150 }}
            value={filters.kind}
            onChange={(v) => {
              setFilter('kind', v);
            }}
            options={KINDS.map((k) => ({ value: k, label: t(`jobKind.${k}`) }))}
          />
          <Select<number>
            allowClear
            aria-label={t('jobs.pool')}
            placeholder={t('jobs.anyPool')}
            style={{ width: 170 }}
            value={filters.pool}
            onChange={(v) => {
              setFilter('pool', v);
            }}
            options={poolOptions(pools.data)}
          />
          <Select<number>
            allowClear
            aria-label={t('jobs.priority')}
            placeholder={t('jobs.anyPriority')}
            style={{ width: 140 }}
            value={filters.priority}
            onChange={(v) => {
              setFilter('priority', v);
            }}
            options={PRIORITIES.map((p) => ({ value: p, label: `P${p}` }))}
          />
          <NameSearch
            label={t('jobs.searchName')}
            width={220}
            onSearch={(name) => {
              setFilter('name', name);
            }}
          />
          {me !== undefined && (
            <Checkbox
              checked={filters.owner !== undefined}
              onChange={(e) => {
                setFilter('owner', e.target.checked ? me : undefined);
              }}
              data-testid="jobs-mine"
            >
              {t('jobs.onlyMine')}
            </Checkbox>
          )}
        </Space>
        <QueryTable<Job>
          rowKey="id"
          data-testid="jobs-table"
          size="middle"
          query={jobs}
          columns={columns}
          rows={jobs.data?.results ?? []}
          pagination={false}
          locale={{
            emptyText: <Empty description={t('jobs.empty')} data-testid="jobs-empty" />,
          }}
        />
        <CursorPager pages={pages} query={jobs} testId="jobs-page" />
      </Card>
    </>
  );
}
