import { ExportOutlined, StopOutlined } from '@ant-design/icons';
import {
  Alert,
  App,
  Button,
  Card,
  Empty,
  Form,
  Input,
  InputNumber,
  Popconfirm,
  Radio,
  Select,
  Space,
  Tag,
  Tooltip,
  Typography,
} from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { CreateButton } from '../../components/CreateButton';
import { CursorPager } from '../../components/CursorPager';
import { FormModal } from '../../components/FormModal';
import { JobStateTag } from '../../components/JobStateTag';
import { ACTIVE_STATES, keepsFiles } from '../../lib/jobStates';
import { NoTenantResult } from '../../components/NoTenantResult';
import { PageHeader } from '../../components/PageHeader';
import { QueryTable } from '../../components/QueryTable';
import type { Job, JobSubmit } from '../../lib/apiTypes';
import { useCursorPages } from '../../lib/cursorPages';
import { formatDateTime } from '../../lib/format';
import { applyServerErrors } from '../../lib/formErrors';
import { currentLanguage } from '../../lib/i18n';
import { devicesLabel, modelsOf, nameRules } from '../jobs/helpers';
import { useJobAction, useJobs, usePools, useSubmitJob } from '../jobs/api';
import { schedulerText } from '../jobs/schedulerText';
import { useActiveIdleFlags } from '../governance/api';
import { useTenant } from '../tenancy/useTenant';
import { NotebookFileActions } from './NotebookFiles';
import { poolOptions } from '../../lib/poolOptions';

type Flavor = 'jupyter' | 'vscode';

interface NotebookValues {
  name: string;
  flavor: Flavor;
  image: string;
  pool?: number;
  accelerator_model?: string;
  /** Milli-devices: 250 and 500 are fractional shares, multiples of 1000 whole devices. */
  share: number;
  storage_gib: number;
}

const IMAGES: Record<Flavor, string> = {
  jupyter: 'quay.io/jupyter/pytorch-notebook:cuda12-latest',
  vscode: 'codercom/code-server:latest',
};
const SHARES = [0, 250, 500, 1000, 2000, 4000, 8000];

function notebookSubmit(values: NotebookValues): JobSubmit {
  const whole = values.share >= 1000 ? values.share / 1000 : 0;
  const milli = values.share < 1000 ? values.share : 0;
  return {
    kind: 'notebook',
    name: values.name.trim(),
    image: values.image.trim(),
    pool: values.pool ?? 0,
    ...(values.share > 0 ? { accelerator_model: values.accelerator_model } : {}),
    priority: 4,
    max_retries: 0,
    notebook: { flavor: values.flavor, storage_gib: values.storage_gib },
    replica_groups: [
      {
        name: 'notebook',
        replicas: 1,
        accelerators: whole,
        accelerator_milli: milli,
        cpu_milli: 4000,
        memory_mib: 32768,
        rdma_nics: 0,
      },
    ],
  };
}

export function NotebooksPage() {
  const tenant = useTenant();
  if (tenant.slug === null) return <NoTenantResult />;
  return <Notebooks tenant={tenant.slug} canWrite={tenant.canWrite} mayCancel={tenant.mayCancel} />;
}

function Notebooks({
  tenant,
  canWrite,
  mayCancel,
}: {
  tenant: string;
  canWrite: boolean;
  mayCancel: (owner: string | null | undefined) => boolean;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const language = currentLanguage();
  const pages = useCursorPages(tenant);
  const notebooks = useJobs(tenant, { kind: 'notebook' }, pages.cursor);
  const stop = useJobAction(tenant, 'cancel');
  const idle = useActiveIdleFlags(tenant).data;
  const [open, setOpen] = useState(false);
  // Homes a listed notebook is using now: a stopped notebook of the same chain can be neither
  // restarted nor have its files deleted meanwhile (the server would answer 409).
  const homesInUse = new Map(
    (notebooks.data?.results ?? [])
      .filter((job) => ACTIVE_STATES.includes(job.state))
      .map((job) => [job.home_job, job.id]),
  );

  const flavorOf = (job: Job): string => {
    const spec = job.spec as { notebook?: { flavor?: string } } | null;
    return spec?.notebook?.flavor === 'vscode' ? t('notebooks.vscode') : t('notebooks.jupyter');
  };

  return (
    <>
      <PageHeader
        title={t('notebooks.title')}
        subtitle={t('notebooks.subtitle')}
        extra={
          canWrite && (
            <CreateButton
              label={t('notebooks.create')}
              onClick={() => {
                setOpen(true);
              }}
            />
          )
        }
      />
      <Card>
        <QueryTable<Job>
          rowKey="id"
          data-testid="notebooks-table"
          query={notebooks}
          pagination={false}
          rows={notebooks.data?.results ?? []}
          locale={{ emptyText: <Empty description={t('notebooks.empty')} /> }}
          columns={[
            {
              title: t('jobs.name'),
              dataIndex: 'name',
              render: (name: string, job) => <Link to={`/jobs/${job.id}`}>{name}</Link>,
            },
            { title: t('notebooks.flavor'), key: 'flavor', render: (_, job) => flavorOf(job) },
            {
              title: t('jobs.state'),
              dataIndex: 'state',
              // A waiting notebook says why (over quota, no capacity...): the category
              // translated, the scheduler's sentence on hover, as on the job's page.
              render: (s: Job['state'], job) => {
                const stopAt = s === 'running' ? idle?.get(job.id)?.stop_at : null;
                return (
                  <Space size={4}>
                    <JobStateTag state={s} />
                    {job.home_deleted_at !== null && (
                      <Tooltip title={formatDateTime(job.home_deleted_at, language)}>
                        <Tag data-testid="files-deleted">{t('notebooks.filesDeleted')}</Tag>
                      </Tooltip>
                    )}
                    {stopAt && (
                      // Idle GPUs: the sweep stops it then unless kept running (on its page).
                      <Link to={`/jobs/${job.id}`} data-testid="idle-stop">
                        <Tag color="warning">
                          {t('notebooks.idleStop', { stop: formatDateTime(stopAt, language) })}
                        </Tag>
                      </Link>
                    )}
                    {s === 'queued' && job.pending_code !== '' && (
                      <Tooltip
                        title={
                          schedulerText(t, language, job.pending_detail, job.pending_message) ||
                          undefined
                        }
                      >
                        <Tag data-testid="pending-code" data-code={job.pending_code}>
                          {t(`cluster.pending_${job.pending_code}`, {
                            defaultValue: job.pending_code,
                          })}
                        </Tag>
                      </Tooltip>
                    )}
                  </Space>
                );
              },
            },
            { title: t('jobs.accelerators'), key: 'dev', render: (_, job) => devicesLabel(job) },
            { title: t('jobs.owner'), dataIndex: 'owner' },
            {
              title: t('jobs.submitted'),
              dataIndex: 'submitted_at',
              render: (at: string) => formatDateTime(at, language),
            },
            {
              title: t('common.actions'),
              key: 'actions',
              render: (_, job) => (
                <Space size="small">
                  {/* A live event patches the state before the list refetches the link: a
                      stopped notebook's old link is never offered meanwhile. */}
                  {job.state === 'running' && job.open_url && <OpenButton url={job.open_url} />}
                  {/* Stopping is for the notebook's owner and tenant (or platform) admins; the
                      server says 403 to other members. */}
                  {ACTIVE_STATES.includes(job.state) && mayCancel(job.owner) && (
                    <Popconfirm
                      title={t('notebooks.stopConfirm', { name: job.name })}
                      description={t('notebooks.stopConfirmBody')}
                      okText={t('notebooks.stop')}
                      cancelText={t('common.no')}
                      onConfirm={() => {
                        stop.mutate(job.id, {
                          onSuccess: () => void message.success(t('notebooks.stopped')),
                          onError: (e) => void message.error(e.summary),
                        });
                      }}
                    >
                      <Button size="small" danger icon={<StopOutlined />}>
                        {t('notebooks.stop')}
                      </Button>
                    </Popconfirm>
                  )}
                  {keepsFiles(job) &&
                    mayCancel(job.owner) &&
                    (homesInUse.has(job.home_job) ? (
                      <Typography.Text type="secondary" data-testid="files-in-use">
                        {t('notebooks.filesInUse', { id: homesInUse.get(job.home_job) ?? '' })}
                      </Typography.Text>
                    ) : (
                      <NotebookFileActions tenant={tenant} job={job} size="small" />
                    ))}
                </Space>
              ),
            },
          ]}
        />
        <CursorPager pages={pages} query={notebooks} testId="notebooks-page" />
      </Card>
      {open && (
        <CreateNotebook
          tenant={tenant}
          onClose={() => {
            setOpen(false);
          }}
        />
      )}
    </>
  );
}

/** Opens the notebook through the platform's proxy (the server adds the notebook's token). */
function OpenButton({ url }: { url: string }) {
  const { t } = useTranslation();
  return (
    <Tooltip title={t('notebooks.openHint')}>
      <Button
        size="small"
        type="primary"
        icon={<ExportOutlined />}
        href={url}
        target="_blank"
        rel="noopener noreferrer"
        data-testid="notebook-open"
      >
        {t('notebooks.open')}
      </Button>
    </Tooltip>
  );
}

function CreateNotebook({ tenant, onClose }: { tenant: string; onClose: () => void }) {
  const { t } = useTranslation();
  const [form] = Form.useForm<NotebookValues>();
  const pools = usePools();
  const submit = useSubmitJob(tenant);
  const [formError, setFormError] = useState<string[]>([]);
  const poolId = Form.useWatch('pool', form);
  const share = Form.useWatch('share', form);
  const models = modelsOf(pools.data?.find((p) => p.id === poolId));

  const onFinish = (values: NotebookValues) => {
    setFormError([]);
    submit.mutate(notebookSubmit(values), {
      onSuccess: onClose,
      onError: (error) => {
        setFormError(
          applyServerErrors(form, error, [['name'], ['image'], ['pool'], ['accelerator_model']])
            .unmatched,
        );
      },
    });
  };

  return (
    <FormModal
      title={t('notebooks.create')}
      okText={t('notebooks.launch')}
      form={form}
      pending={submit.isPending}
      onClose={onClose}
    >
      <Form<NotebookValues>
        form={form}
        layout="vertical"
        name="notebook"
        initialValues={{ flavor: 'jupyter', image: IMAGES.jupyter, share: 500, storage_gib: 20 }}
        onFinish={onFinish}
      >
        <Form.Item name="name" label={t('submit.name')} rules={nameRules(t)}>
          <Input placeholder="explore-data" />
        </Form.Item>
        <Form.Item name="flavor" label={t('notebooks.flavor')}>
          <Radio.Group
            onChange={(e) => {
              form.setFieldValue('image', IMAGES[e.target.value as Flavor]);
            }}
            options={[
              { value: 'jupyter', label: t('notebooks.jupyter') },
              { value: 'vscode', label: t('notebooks.vscode') },
            ]}
          />
        </Form.Item>
        <Form.Item
          name="image"
          label={t('submit.image')}
          rules={[{ required: true, whitespace: true, message: t('submit.imageRequired') }]}
        >
          <Input />
        </Form.Item>
        <Form.Item
          name="pool"
          label={t('submit.pool')}
          rules={[{ required: true, message: t('submit.poolRequired') }]}
        >
          <Select<number>
            loading={pools.isPending}
            onChange={() => {
              form.setFieldValue('accelerator_model', undefined);
            }}
            options={poolOptions(pools.data)}
          />
        </Form.Item>
        <Form.Item
          name="share"
          label={t('notebooks.accelerators')}
          extra={t('notebooks.shareHint')}
        >
          <Select<number>
            options={SHARES.map((s) => ({
              value: s,
              label:
                s === 0
                  ? t('notebooks.noAccelerator')
                  : s < 1000
                    ? t('notebooks.fraction', { share: s / 1000 })
                    : t('notebooks.whole', { n: s / 1000 }),
            }))}
          />
        </Form.Item>
        {share !== 0 && (
          <Form.Item
            name="accelerator_model"
            label={t('submit.model')}
            rules={[{ required: true, message: t('submit.modelRequired') }]}
          >
            <Select<string>
              disabled={models.length === 0}
              options={models.map((m) => ({ value: m.model, label: m.model }))}
            />
          </Form.Item>
        )}
        <Form.Item
          name="storage_gib"
          label={t('notebooks.storage')}
          rules={[
            {
              required: true,
              type: 'integer',
              min: 1,
              max: 2048,
              message: t('notebooks.storageRule'),
            },
          ]}
        >
          <InputNumber min={1} max={2048} suffix="GiB" />
        </Form.Item>
        {formError.length > 0 && <Alert type="error" showIcon title={formError.join(' ')} />}
      </Form>
    </FormModal>
  );
}
