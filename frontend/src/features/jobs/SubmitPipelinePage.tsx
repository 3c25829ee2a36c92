import { Alert, App, Button, Card, Space, Table, theme, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import type { TFunction } from 'i18next';
import { useDeferredValue, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { SpecFileCard } from '../../components/SpecFileCard';
import { SpecFilePreview } from '../../components/SpecFilePreview';
import type { Pool } from '../../lib/apiTypes';
import { usePools, useSubmitPipeline } from './api';
import { devicesLabel } from './helpers';
import { PipelineDiagram } from './PipelineDiagram';
import {
  poolRef,
  readPipelineFile,
  readText,
  stepErrors,
  type PipelineProblem,
  type PipelineStepSummary,
} from './pipelineFile';
import { boxFrame, type PipelineNode, type PlacedNode } from './pipelineLayout';

const EXAMPLE = `pool: a800-train
image: registry.example.com/ml/pytorch:2.5-cuda12
replica_groups: [{name: worker, replicas: 1, accelerators: 8}]
pipeline:
  - {name: prep, command: [python, prep.py]}
  - {name: train, command: [torchrun, train.py], after: [prep]}
  - {name: eval, command: [python, eval.py], after: [train]}`;

/** What a problem's message may interpolate: all of it, so that any code's message can. */
const PROBLEM_FIELDS = [
  'message',
  'path',
  'name',
  'ref',
  'pool',
  'pools',
  'clusters',
  'example',
  'ids',
] as const;

/** A problem with the file, in the reader's language: which step (or the defaults), then what. */
function problemText(t: TFunction, problem: PipelineProblem): string {
  const fields: Partial<Record<string, string | number>> = problem;
  const params = Object.fromEntries(
    PROBLEM_FIELDS.map((key) => [key, String(fields[key] ?? '')]),
  ) as Record<(typeof PROBLEM_FIELDS)[number], string>;
  const what = t(`pipelineSubmit.problem.${problem.code}`, params);
  const step = 'step' in problem ? problem.step : undefined;
  if (step === undefined) {
    return problem.code.startsWith('pool')
      ? t('pipelineSubmit.where', { where: t('pipelineSubmit.defaults'), what })
      : what;
  }
  const name = 'name' in problem ? problem.name : undefined;
  const where =
    name === undefined
      ? t('pipelineSubmit.stepNumber', { step })
      : t('pipelineSubmit.stepNamed', { step, name });
  return t('pipelineSubmit.where', { where, what });
}

/** /jobs/new-pipeline: a pipeline file (the CLI's), previewed, then submitted in one request. */
export function SubmitPipelinePage({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { message } = App.useApp();
  const [text, setText] = useState('');
  const [fileName, setFileName] = useState('');
  const [uploadError, setUploadError] = useState<string | null>(null);
  const pools = usePools();
  const submit = useSubmitPipeline(tenant);
  const source = useDeferredValue(text);
  const file = useMemo(
    () =>
      pools.data === undefined || source.trim() === ''
        ? undefined
        : readPipelineFile(source, pools.data, fileName),
    [source, pools.data, fileName],
  );
  const steps = file?.ok ? file.steps : [];
  // A refused submission's errors, by step; cleared (submit.reset) once the text changes.
  const refused = submit.error ? stepErrors(submit.error.errors, steps.length) : undefined;
  const general =
    refused === undefined
      ? []
      : refused.general.length === 0 && refused.byStep.size === 0
        ? [submit.error?.summary ?? '']
        : refused.general;

  const change = (next: string, name = fileName) => {
    setText(next);
    setFileName(next.trim() === '' ? '' : name);
    setUploadError(null);
    submit.reset();
  };

  const upload = async (picked: File) => {
    try {
      const read = await readText(picked);
      if (read === null) setUploadError(t('pipelineSubmit.notUtf8', { name: picked.name }));
      else change(read, picked.name);
    } catch {
      setUploadError(t('pipelineSubmit.readFailed', { name: picked.name }));
    }
  };

  const onSubmit = () => {
    if (!file?.ok) return;
    submit.mutate(file.body, {
      onSuccess: ({ jobs }) => {
        void message.success(t('pipelineSubmit.queued', { count: jobs.length }));
        const [first] = jobs;
        void navigate(first === undefined ? '/jobs' : `/jobs/${first.id}`);
      },
    });
  };

  return (
    <>
      <PageHeader title={t('pipelineSubmit.title')} subtitle={t('pipelineSubmit.subtitle')} />
      <SpecFileCard
        title={t('pipelineSubmit.fileTitle')}
        uploadLabel={t('pipelineSubmit.upload')}
        hint={t('pipelineSubmit.fileHint')}
        label={t('pipelineSubmit.fileLabel')}
        id="pipeline-file"
        value={text}
        onChange={change}
        onUpload={(picked) => void upload(picked)}
        fromFile={fileName === '' ? undefined : t('pipelineSubmit.fromFile', { name: fileName })}
        fromFileTestId="pipeline-file-name"
        uploadError={uploadError}
        uploadErrorTestId="pipeline-upload-error"
        placeholder={EXAMPLE}
        rows={14}
      />

      <Card title={t('pipelineSubmit.preview')} style={{ marginTop: 16 }}>
        <SpecFilePreview
          pools={pools}
          file={file}
          emptyText={t('pipelineSubmit.previewEmpty')}
          emptyTestId="pipeline-preview-empty"
          problemsTitle={t('pipelineSubmit.problemsTitle')}
          problemsTestId="pipeline-problems"
          problemText={(problem) => problemText(t, problem)}
        >
          {(read, loaded) => (
            <>
              {refused !== undefined && (
                <Alert
                  type="error"
                  showIcon
                  style={{ marginBottom: 16 }}
                  title={t('pipelineSubmit.notSubmitted')}
                  data-testid="pipeline-submit-error"
                  description={
                    <>
                      {general.map((line, i) => (
                        <div key={i}>{line}</div>
                      ))}
                      {refused.byStep.size > 0 && <div>{t('pipelineSubmit.seeSteps')}</div>}
                    </>
                  }
                />
              )}
              <StepsGraph steps={read.steps} pools={loaded} refused={refused?.byStep} />
              <StepsTable steps={read.steps} pools={loaded} refused={refused?.byStep} />
            </>
          )}
        </SpecFilePreview>
        <Space style={{ marginTop: 16 }}>
          <Button type="primary" disabled={!file?.ok} loading={submit.isPending} onClick={onSubmit}>
            {t('pipelineSubmit.submit')}
          </Button>
          <Button type="link" onClick={() => void navigate('/jobs')}>
            {t('pipelineSubmit.cancel')}
          </Button>
        </Space>
      </Card>
    </>
  );
}

function poolLabel(id: number | undefined, pools: Pool[]): string {
  if (id === undefined) return '—';
  const pool = pools.find((p) => p.id === id);
  return pool === undefined ? `#${id}` : poolRef(pool, pools);
}

function devicesText(step: PipelineStepSummary): string {
  if (step.devices === undefined) return '—';
  const count = devicesLabel({
    requested_devices: step.devices.whole,
    requested_milli: step.devices.milli,
  });
  return step.acceleratorModel === undefined ? count : `${count} × ${step.acceleratorModel}`;
}

interface StepsProps {
  steps: PipelineStepSummary[];
  pools: Pool[];
  /** A refused submission's errors, by the step's index. */
  refused: Map<number, string[]> | undefined;
}

/**
 * The steps drawn as the job page draws a pipeline. A step's node is its index; an existing job
 * it starts after is a node of its own after the steps (its box says "#id").
 */
function StepsGraph({ steps, pools, refused }: StepsProps) {
  const { t } = useTranslation();
  const { nodes, jobOf } = useMemo(() => {
    const jobs = [...new Set(steps.flatMap((s) => s.afterJobs))];
    const jobNode = new Map(jobs.map((id, k) => [id, steps.length + k]));
    const graph: PipelineNode[] = [
      ...steps.map((s) => ({
        id: s.index,
        after: [...s.afterSteps, ...s.afterJobs.map((id) => jobNode.get(id) ?? -1)],
      })),
      ...jobs.map((_, k) => ({ id: steps.length + k, after: [] })),
    ];
    return { nodes: graph, jobOf: new Map(jobs.map((id, k) => [steps.length + k, id])) };
  }, [steps]);
  return (
    <PipelineDiagram
      nodes={nodes}
      label={t('pipelineSubmit.graphLabel')}
      testId="pipeline-preview-graph"
      renderNode={(node) => {
        const step = steps[node.id];
        if (step !== undefined) {
          return (
            <StepBox
              key={node.id}
              node={node}
              step={step}
              pool={poolLabel(step.pool, pools)}
              refused={refused?.has(step.index) ?? false}
            />
          );
        }
        const job = jobOf.get(node.id);
        return job === undefined ? null : <JobBox key={node.id} node={node} id={job} />;
      }}
    />
  );
}

function StepBox({
  node,
  step,
  pool,
  refused,
}: {
  node: PlacedNode;
  step: PipelineStepSummary;
  pool: string;
  refused: boolean;
}) {
  const { t } = useTranslation();
  const { token } = theme.useToken();
  return (
    <div
      data-testid="pipeline-step"
      data-step={step.index}
      data-refused={refused || undefined}
      style={{
        ...boxFrame(node),
        border: `1px solid ${refused ? token.colorError : token.colorBorder}`,
        borderLeft: `4px solid ${refused ? token.colorError : token.colorPrimary}`,
        borderRadius: token.borderRadius,
        background: refused ? token.colorErrorBg : token.colorBgContainer,
      }}
    >
      <Typography.Text strong ellipsis style={{ display: 'block' }}>
        {step.name}
      </Typography.Text>
      <Typography.Text type="secondary" ellipsis style={{ display: 'block' }}>
        {t('pipelineSubmit.stepNumber', { step: step.index + 1 })} · {pool} · {devicesText(step)}
      </Typography.Text>
    </div>
  );
}

/** An existing job a step starts after: not submitted with the file, so drawn dashed. */
function JobBox({ node, id }: { node: PlacedNode; id: number }) {
  const { t } = useTranslation();
  const { token } = theme.useToken();
  return (
    <div
      data-testid="pipeline-existing-job"
      data-job-id={id}
      style={{
        ...boxFrame(node),
        border: `1px dashed ${token.colorBorder}`,
        borderRadius: token.borderRadius,
        background: token.colorFillQuaternary,
      }}
    >
      <Typography.Text strong>#{id}</Typography.Text>
      <Typography.Text type="secondary">{t('pipelineSubmit.existingJob')}</Typography.Text>
    </div>
  );
}

function StepsTable({ steps, pools, refused }: StepsProps) {
  const { t } = useTranslation();
  const columns: ColumnsType<PipelineStepSummary> = [
    { title: '#', key: 'number', width: 50, render: (_, step) => step.index + 1 },
    {
      title: t('pipelineSubmit.step'),
      key: 'name',
      render: (_, step) => {
        const errors = refused?.get(step.index) ?? [];
        return (
          <>
            <Typography.Text strong>{step.name}</Typography.Text>
            {errors.length > 0 && (
              <ul
                style={{ margin: '4px 0 0', paddingLeft: 18 }}
                data-testid={`step-errors-${step.name}`}
              >
                {errors.map((line, i) => (
                  <li key={i}>
                    <Typography.Text type="danger">{line}</Typography.Text>
                  </li>
                ))}
              </ul>
            )}
          </>
        );
      },
    },
    {
      title: t('pipelineSubmit.pool'),
      key: 'pool',
      render: (_, step) => poolLabel(step.pool, pools),
    },
    {
      title: t('pipelineSubmit.accelerators'),
      key: 'devices',
      render: (_, step) => devicesText(step),
    },
    {
      title: t('pipelineSubmit.after'),
      key: 'after',
      render: (_, step) => {
        const refs = [
          ...step.afterSteps.map((i) => steps[i]?.name ?? ''),
          ...step.afterJobs.map((id) => `#${id}`),
        ];
        return refs.length ? refs.join(', ') : '—';
      },
    },
  ];
  return (
    <Table<PipelineStepSummary>
      rowKey="index"
      size="small"
      style={{ marginTop: 16 }}
      data-testid="pipeline-steps"
      columns={columns}
      dataSource={steps}
      pagination={false}
    />
  );
}
