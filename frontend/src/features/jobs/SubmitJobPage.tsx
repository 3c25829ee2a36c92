import { MinusCircleOutlined, PlusOutlined } from '@ant-design/icons';
import {
  Alert,
  Button,
  Card,
  Descriptions,
  Form,
  Input,
  InputNumber,
  Select,
  Skeleton,
  Space,
  Steps,
  Typography,
} from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate, useSearchParams } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import type { Job, JobSubmit, Pool } from '../../lib/apiTypes';
import { applyServerErrors } from '../../lib/formErrors';
import { formatDuration } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { PRIORITIES, canFollow, modelsOf, nameRules } from './helpers';
import { MAX_ARGS, MAX_ARG_LENGTH, parseCommand } from './command';
import { useAfterCandidates, useJob, usePools, useSubmitJob } from './api';
import { nextStepValues, type GroupValues } from './nextStep';
import { useProjects } from '../projects/api';
import { poolOptions } from '../../lib/poolOptions';

interface WizardValues {
  name: string;
  project?: number | null;
  image: string;
  command?: string;
  pool?: number;
  accelerator_model?: string;
  replica_groups: GroupValues[];
  priority: number;
  topology_mode: 'none' | 'soft' | 'hard';
  topology_tier: 'leaf' | 'su' | 'spine';
  max_retries: number;
  max_wait_s?: number | null;
  max_runtime_s?: number | null;
  /** Ids of training jobs that must succeed before this one starts. */
  after?: number[];
}

type Name = (string | number)[];

const STEP_FIELDS: Name[][] = [
  [['name'], ['project'], ['image'], ['command']],
  [['pool'], ['accelerator_model'], ['replica_groups']],
  [
    ['priority'],
    ['topology_mode'],
    ['topology_tier'],
    ['max_retries'],
    ['max_wait_s'],
    ['max_runtime_s'],
    ['after'],
  ],
];

/** Server field names -> the wizard's field names. */
const SERVER_FIELDS: Record<string, Name> = {
  'topology.mode': ['topology_mode'],
  'topology.highest_tier': ['topology_tier'],
};

/** The Command field as argv; [] (the image's entrypoint) when empty. */
function argvOf(values: WizardValues): string[] {
  const parsed = parseCommand(values.command ?? '');
  // The field's rule refuses what does not parse, so the form never submits such text.
  return parsed.ok ? parsed.argv : [];
}

function toSubmit(values: WizardValues): JobSubmit {
  return {
    kind: 'training',
    name: values.name.trim(),
    project: values.project ?? null,
    image: values.image.trim(),
    command: argvOf(values),
    pool: values.pool ?? 0,
    accelerator_model: values.accelerator_model,
    priority: values.priority,
    max_retries: values.max_retries,
    ...(values.max_wait_s ? { max_wait_s: values.max_wait_s } : {}),
    ...(values.max_runtime_s ? { max_runtime_s: values.max_runtime_s } : {}),
    ...(values.after?.length ? { after: values.after } : {}),
    topology: { mode: values.topology_mode, highest_tier: values.topology_tier },
    replica_groups: values.replica_groups.map((g) => ({
      name: g.name.trim(),
      replicas: g.replicas,
      accelerators: g.accelerators,
      accelerator_milli: 0,
      cpu_milli: Math.round(g.cpu * 1000),
      memory_mib: Math.round(g.memory_gib * 1024),
      rdma_nics: 0,
    })),
  };
}

const INITIAL: Partial<WizardValues> = {
  replica_groups: [{ name: 'worker', replicas: 1, accelerators: 8, cpu: 32, memory_gib: 256 }],
  priority: 4,
  topology_mode: 'soft',
  topology_tier: 'spine',
  max_retries: 3,
};

interface PageProps {
  tenant: string;
  isTenantAdmin: boolean;
}

/** /jobs/new, and /jobs/new?after=<id>: a next step of that job, filled in from it. */
export function SubmitJobPage(props: PageProps) {
  const [params] = useSearchParams();
  const after = Number(params.get('after'));
  if (!Number.isInteger(after) || after <= 0) return <SubmitWizard {...props} />;
  return <NextStepWizard key={after} {...props} after={after} />;
}

function NextStepWizard({ after, ...props }: PageProps & { after: number }) {
  const job = useJob(props.tenant, after);
  if (job.isPending) return <Skeleton active paragraph={{ rows: 8 }} />;
  // Not a job of this tenant (404), or one no job may start after: the form as usual.
  const previous = job.data !== undefined && canFollow(job.data) ? job.data : undefined;
  return <SubmitWizard {...props} previous={previous} />;
}

function SubmitWizard({
  tenant,
  isTenantAdmin,
  previous,
}: PageProps & {
  /** The job this one is the next step of. */
  previous?: Job;
}) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [form] = Form.useForm<WizardValues>();
  // The form reads its initial values once, when it mounts.
  const [initialValues] = useState<Partial<WizardValues>>(() =>
    previous === undefined ? INITIAL : { ...INITIAL, ...nextStepValues(previous) },
  );
  const [step, setStep] = useState(0);
  const [formError, setFormError] = useState<string[]>([]);
  const pools = usePools();
  const projects = useProjects(tenant);
  const afterCandidates = useAfterCandidates(tenant);
  const submit = useSubmitJob(tenant);
  const poolId = Form.useWatch('pool', form);
  const model = Form.useWatch('accelerator_model', form);
  const groups = Form.useWatch('replica_groups', form) as GroupValues[] | undefined;
  const priority = Form.useWatch('priority', form) as number | undefined;
  const pool = pools.data?.find((p) => p.id === poolId);
  const candidates = afterCandidates.data ?? [];
  // The job a next step follows may be older than the newest candidates: offer it all the same.
  const afterOptions =
    previous === undefined || candidates.some((job) => job.id === previous.id)
      ? candidates
      : [previous, ...candidates];
  const models = modelsOf(pool);
  const chosen = models.find((m) => m.model === model);
  const capacity = chosen?.devices;
  const perNode = chosen?.perNode;
  const totalDevices = (groups ?? []).reduce(
    (sum, g) => sum + (g.replicas || 0) * (g.accelerators || 0),
    0,
  );

  const next = async () => {
    try {
      await form.validateFields(STEP_FIELDS[step], { recursive: true });
      setStep((s) => s + 1);
    } catch {
      // antd shows the messages on the fields.
    }
  };

  const onFinish = () => {
    setFormError([]);
    // Hidden steps keep their values (preserve), so the whole form is submitted at once.
    const values = form.getFieldsValue(true) as WizardValues;
    submit.mutate(toSubmit(values), {
      onSuccess: (job) => void navigate(`/jobs/${job.id}`),
      onError: (error) => {
        const known: Name[] = [
          ...STEP_FIELDS.flat(),
          ...(values.replica_groups.flatMap((_, i) =>
            ['name', 'replicas', 'accelerators'].map((f) => ['replica_groups', i, f]),
          ) as Name[]),
        ];
        // Rename the server's nested names before matching.
        const renamed = Object.fromEntries(
          Object.entries(error.errors).map(([k, v]) => [SERVER_FIELDS[k]?.join('.') ?? k, v]),
        );
        Object.assign(error.errors, renamed);
        for (const k of Object.keys(SERVER_FIELDS)) {
          Reflect.deleteProperty(error.errors, k);
        }
        const { unmatched, fields } = applyServerErrors(form, error, known);
        setFormError(unmatched);
        const first = STEP_FIELDS.findIndex((names) =>
          fields.some((f) => names.some((n) => n[0] === f[0])),
        );
        if (first >= 0) setStep(first);
      },
    });
  };

  const stepStyle = (i: number) => ({ display: step === i ? 'block' : 'none' });

  return (
    <>
      <PageHeader title={t('submit.title')} subtitle={t('submit.subtitle')} />
      {previous !== undefined && (
        <Alert
          type="info"
          showIcon
          style={{ marginBottom: 16 }}
          data-testid="next-step-of"
          title={t('submit.nextStepOf', { id: previous.id, name: previous.name })}
        />
      )}
      <Card>
        <Steps
          current={step}
          style={{ marginBottom: 28 }}
          items={[
            { title: t('submit.stepBasics') },
            { title: t('submit.stepResources') },
            { title: t('submit.stepScheduling') },
            { title: t('submit.stepReview') },
          ]}
        />
        <Form<WizardValues>
          form={form}
          layout="vertical"
          name="submit"
          initialValues={initialValues}
          onFinish={onFinish}
          preserve
          style={{ maxWidth: 760 }}
        >
          <div style={stepStyle(0)}>
            <Form.Item name="name" label={t('submit.name')} rules={nameRules(t)}>
              <Input placeholder="resnet50-ddp" />
            </Form.Item>
            <Form.Item name="project" label={t('projects.field')} extra={t('projects.fieldHint')}>
              <Select
                allowClear
                showSearch={{ optionFilterProp: 'label' }}
                placeholder={t('projects.none')}
                loading={projects.isPending}
                options={(projects.data ?? []).map((p) => ({ value: p.id, label: p.name }))}
              />
            </Form.Item>
            <Form.Item
              name="image"
              label={t('submit.image')}
              rules={[{ required: true, whitespace: true, message: t('submit.imageRequired') }]}
            >
              <Input placeholder="nvcr.io/nvidia/pytorch:24.05-py3" />
            </Form.Item>
            <Form.Item
              name="command"
              label={t('submit.command')}
              extra={t('submit.commandHint')}
              rules={[
                {
                  validator: async (_, value: string | undefined) => {
                    const parsed = parseCommand(value ?? '');
                    if (!parsed.ok) {
                      throw new Error(
                        t(`submit.commandErrors.${parsed.error}`, {
                          n: parsed.arg ?? 0,
                          maxArgs: MAX_ARGS,
                          maxLength: MAX_ARG_LENGTH,
                        }),
                      );
                    }
                    return Promise.resolve();
                  },
                },
              ]}
            >
              <Input placeholder="torchrun train.py --epochs 90" />
            </Form.Item>
          </div>

          <div style={stepStyle(1)}>
            <Space size={16} wrap>
              <Form.Item
                name="pool"
                label={t('submit.pool')}
                rules={[{ required: true, message: t('submit.poolRequired') }]}
              >
                <Select<number>
                  style={{ width: 240 }}
                  loading={pools.isPending}
                  onChange={() => {
                    form.setFieldValue('accelerator_model', undefined);
                  }}
                  options={poolOptions(pools.data)}
                />
              </Form.Item>
              <Form.Item
                name="accelerator_model"
                label={t('submit.model')}
                rules={[{ required: true, message: t('submit.modelRequired') }]}
              >
                <Select<string>
                  style={{ width: 280 }}
                  disabled={pool === undefined}
                  options={models.map((m) => ({
                    value: m.model,
                    label: t('submit.modelOption', { model: m.model, devices: m.devices }),
                  }))}
                />
              </Form.Item>
            </Space>
            <Typography.Title level={5}>{t('submit.replicaGroups')}</Typography.Title>
            <Form.List
              name="replica_groups"
              rules={[
                {
                  validator: async (_, value: GroupValues[] | undefined) => {
                    if (!value || value.length === 0) throw new Error(t('submit.groupsRequired'));
                    const total = value.reduce(
                      (s, g) => s + (g.replicas || 0) * (g.accelerators || 0),
                      0,
                    );
                    if (capacity !== undefined && total > capacity) {
                      throw new Error(t('submit.overCapacity', { total, capacity }));
                    }
                    return Promise.resolve();
                  },
                },
              ]}
            >
              {(fields, { add, remove }, { errors }) => (
                <>
                  {fields.map((field) => (
                    <Space key={field.key} align="start" wrap data-testid="replica-group">
                      <Form.Item
                        name={[field.name, 'name']}
                        label={t('submit.groupName')}
                        rules={nameRules(t, t('submit.groupNameRequired'))}
                      >
                        <Input style={{ width: 140 }} />
                      </Form.Item>
                      <Form.Item
                        name={[field.name, 'replicas']}
                        label={t('submit.replicas')}
                        rules={[
                          {
                            required: true,
                            type: 'integer',
                            min: 1,
                            max: 512,
                            message: t('submit.replicasRange'),
                          },
                        ]}
                      >
                        <InputNumber precision={0} />
                      </Form.Item>
                      <Form.Item
                        name={[field.name, 'accelerators']}
                        label={t('submit.acceleratorsPerReplica')}
                        rules={[
                          {
                            required: true,
                            type: 'integer',
                            min: 0,
                            max: 16,
                            message: t('submit.acceleratorsRange'),
                          },
                          {
                            validator: async (_, asked: number | undefined) => {
                              if (perNode !== undefined && asked !== undefined && asked > perNode) {
                                const group = groups?.[field.name]?.name ?? '';
                                throw new Error(
                                  t('submit.overNode', {
                                    group,
                                    asked,
                                    model: model ?? '',
                                    perNode,
                                  }),
                                );
                              }
                              return Promise.resolve();
                            },
                          },
                        ]}
                      >
                        <InputNumber precision={0} />
                      </Form.Item>
                      <Form.Item
                        name={[field.name, 'cpu']}
                        label={t('submit.cpu')}
                        rules={[{ required: true }]}
                      >
                        <InputNumber min={0.5} max={256} step={1} />
                      </Form.Item>
                      <Form.Item
                        name={[field.name, 'memory_gib']}
                        label={t('submit.memory')}
                        rules={[{ required: true }]}
                      >
                        <InputNumber min={1} max={4096} />
                      </Form.Item>
                      {fields.length > 1 && (
                        <Button
                          type="text"
                          aria-label={t('submit.removeGroup')}
                          icon={<MinusCircleOutlined />}
                          style={{ marginTop: 30 }}
                          onClick={() => {
                            remove(field.name);
                          }}
                        />
                      )}
                    </Space>
                  ))}
                  <Form.ErrorList errors={errors} />
                  <Button
                    type="dashed"
                    icon={<PlusOutlined />}
                    onClick={() => {
                      add({
                        name: `group${fields.length + 1}`,
                        replicas: 1,
                        accelerators: 8,
                        cpu: 32,
                        memory_gib: 256,
                      });
                    }}
                  >
                    {t('submit.addGroup')}
                  </Button>
                  <Typography.Paragraph
                    type="secondary"
                    style={{ marginTop: 12 }}
                    data-testid="total-devices"
                  >
                    {capacity === undefined
                      ? t('submit.totalDevices', { total: totalDevices })
                      : t('submit.totalDevicesOf', { total: totalDevices, capacity })}
                  </Typography.Paragraph>
                </>
              )}
            </Form.List>
          </div>

          <div style={stepStyle(2)}>
            <Form.Item
              name="priority"
              label={t('submit.priority')}
              extra={t('submit.priorityHint')}
              rules={[
                {
                  validator: async (_, value: number) => {
                    if (!isTenantAdmin && value <= 2) throw new Error(t('submit.priorityDenied'));
                    return Promise.resolve();
                  },
                },
              ]}
            >
              <Select<number>
                style={{ width: 320 }}
                options={PRIORITIES.map((p) => ({
                  value: p,
                  label: t(`priority.p${p as 0 | 1 | 2 | 3 | 4 | 5}`),
                }))}
              />
            </Form.Item>
            {priority !== undefined && priority <= 2 && !isTenantAdmin && (
              <Alert
                type="warning"
                showIcon
                title={t('submit.priorityDenied')}
                style={{ marginBottom: 16 }}
              />
            )}
            <Space size={16} wrap>
              <Form.Item
                name="topology_mode"
                label={t('submit.topologyMode')}
                extra={t('submit.topologyModeHint')}
              >
                <Select
                  style={{ width: 220 }}
                  options={(['none', 'soft', 'hard'] as const).map((m) => ({
                    value: m,
                    label: t(`topologyMode.${m}`),
                  }))}
                />
              </Form.Item>
              <Form.Item name="topology_tier" label={t('submit.topologyTier')}>
                <Select
                  style={{ width: 220 }}
                  options={(['leaf', 'su', 'spine'] as const).map((m) => ({
                    value: m,
                    label: t(`topologyTier.${m}`),
                  }))}
                />
              </Form.Item>
            </Space>
            <Space size={16} wrap>
              <Form.Item
                name="max_retries"
                label={t('submit.retries')}
                rules={[
                  {
                    required: true,
                    type: 'integer',
                    min: 0,
                    max: 20,
                    message: t('submit.retriesRange'),
                  },
                ]}
              >
                <InputNumber min={0} max={20} />
              </Form.Item>
              <Form.Item
                name="max_wait_s"
                label={t('submit.maxWait')}
                extra={t('submit.maxWaitHint')}
              >
                <InputNumber min={60} step={60} style={{ width: 160 }} />
              </Form.Item>
              <Form.Item
                name="max_runtime_s"
                label={t('submit.maxRuntime')}
                extra={t('submit.maxRuntimeHint')}
              >
                <InputNumber min={60} step={600} style={{ width: 160 }} />
              </Form.Item>
            </Space>
            <Form.Item name="after" label={t('submit.after')} extra={t('submit.afterHint')}>
              <Select<number[]>
                mode="multiple"
                allowClear
                showSearch={{ optionFilterProp: 'label' }}
                placeholder={t('submit.afterPlaceholder')}
                loading={afterCandidates.isPending}
                options={afterOptions.map((job) => ({
                  value: job.id,
                  label: t('submit.afterOption', {
                    id: job.id,
                    name: job.name,
                    state: t(`jobState.${job.state}`),
                  }),
                }))}
              />
            </Form.Item>
          </div>

          <div style={stepStyle(3)}>
            {step === 3 && (
              <Review
                values={form.getFieldsValue(true) as WizardValues}
                pool={pool}
                total={totalDevices}
              />
            )}
          </div>

          {formError.length > 0 && (
            <Alert
              type="error"
              showIcon
              title={t('submit.failed')}
              description={formError.join(' ')}
              style={{ marginBottom: 16 }}
              data-testid="submit-error"
            />
          )}
          <Space>
            {step > 0 && (
              <Button
                onClick={() => {
                  setStep((s) => s - 1);
                }}
              >
                {t('submit.back')}
              </Button>
            )}
            {step < 3 && (
              <Button type="primary" onClick={() => void next()}>
                {t('submit.next')}
              </Button>
            )}
            {step === 3 && (
              <Button type="primary" htmlType="submit" loading={submit.isPending}>
                {t('submit.submit')}
              </Button>
            )}
            <Button type="link" onClick={() => void navigate('/jobs')}>
              {t('submit.cancel')}
            </Button>
          </Space>
        </Form>
      </Card>
    </>
  );
}

function Review({
  values,
  pool,
  total,
}: {
  values: WizardValues;
  pool: Pool | undefined;
  total: number;
}) {
  const { t } = useTranslation();
  return (
    <Descriptions
      bordered
      column={1}
      size="small"
      style={{ marginBottom: 24 }}
      data-testid="submit-review"
    >
      <Descriptions.Item label={t('submit.name')}>{values.name}</Descriptions.Item>
      <Descriptions.Item label={t('submit.image')}>{values.image}</Descriptions.Item>
      <Descriptions.Item label={t('submit.command')}>
        <ReviewCommand argv={argvOf(values)} />
      </Descriptions.Item>
      <Descriptions.Item label={t('submit.pool')}>{pool?.name ?? '—'}</Descriptions.Item>
      <Descriptions.Item label={t('submit.model')}>
        {values.accelerator_model ?? '—'}
      </Descriptions.Item>
      <Descriptions.Item label={t('submit.replicaGroups')}>
        {values.replica_groups
          .map((g) =>
            t('submit.groupSummary', {
              name: g.name,
              replicas: g.replicas,
              accelerators: g.accelerators,
            }),
          )
          .join('; ')}
      </Descriptions.Item>
      <Descriptions.Item label={t('submit.totalLabel')}>{total}</Descriptions.Item>
      <Descriptions.Item label={t('submit.priority')}>P{values.priority}</Descriptions.Item>
      <Descriptions.Item label={t('submit.topologyMode')}>
        {t(`topologyMode.${values.topology_mode}`)} / {t(`topologyTier.${values.topology_tier}`)}
      </Descriptions.Item>
      <Descriptions.Item label={t('submit.retries')}>{values.max_retries}</Descriptions.Item>
      <Descriptions.Item label={t('jobDetail.runtimeLimit')}>
        {values.max_runtime_s ? formatDuration(values.max_runtime_s, currentLanguage()) : '—'}
      </Descriptions.Item>
      <Descriptions.Item label={t('submit.after')}>
        {values.after?.length ? values.after.map((id) => `#${id}`).join(', ') : '—'}
      </Descriptions.Item>
    </Descriptions>
  );
}

/**
 * The argv exactly as the job gets it, one quoted item per argument, so that the user sees how
 * the Command line was split (where quotes grouped words, which backslashes were kept).
 */
function ReviewCommand({ argv }: { argv: string[] }) {
  const { t } = useTranslation();
  if (argv.length === 0) {
    return <Typography.Text type="secondary">{t('submit.entrypoint')}</Typography.Text>;
  }
  return (
    <Typography.Text code data-testid="review-command">
      [{argv.map((arg) => JSON.stringify(arg)).join(', ')}]
    </Typography.Text>
  );
}
