import { Alert, App, Button, Card, Descriptions, Select, Space, Table, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import type { TFunction } from 'i18next';
import { useDeferredValue, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { SpecFileCard } from '../../components/SpecFileCard';
import { SpecFilePreview } from '../../components/SpecFilePreview';
import type { Pool } from '../../lib/apiTypes';
import { usePools } from '../jobs/api';
import { devicesLabel } from '../jobs/helpers';
import { poolRef, readText } from '../jobs/pipelineFile';
import { useProjects } from '../projects/api';
import { useSubmitSweep } from './api';
import { earlyStopText, metricText, valueText } from './sweepData';
import {
  readSweepFile,
  sweepErrors,
  type ParameterSummary,
  type SweepProblem,
  type SweepBody,
  type SweepSummary,
} from './sweepFile';

const MONOSPACE = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';

const EXAMPLE = `pool: a800-train
image: registry.example.com/ml/pytorch:2.5-cuda12
replica_groups: [{name: worker, replicas: 1, accelerators: 8}]
command: [python, train.py]
args: [--lr, "{{lr}}", --opt, "{{opt}}"]
sweep:
  name: lr-search
  method: random
  trials: 12
  parallel: 4
  metric: loss
  goal: min
  parameters:
    lr: {log_uniform: [1e-5, 1e-3]}
    opt: [adam, lion]`;

/** What a problem's message may interpolate: all of it, so that any code's message can. */
const PROBLEM_FIELDS = [
  'message',
  'path',
  'field',
  'method',
  'value',
  'parameter',
  'size',
  'names',
  'pool',
  'pools',
  'clusters',
  'example',
  'ids',
  'rule',
] as const;

/** A problem with the file, in the reader's language. */
function problemText(t: TFunction, problem: SweepProblem): string {
  const fields: Partial<Record<string, string | number>> = problem;
  const params = Object.fromEntries(
    PROBLEM_FIELDS.map((key) => [key, String(fields[key] ?? '')]),
  ) as Record<(typeof PROBLEM_FIELDS)[number], string>;
  // A placeholder as the file should write it; passed as a value, which i18next leaves as is.
  if (problem.code === 'notText') params.example = '"{{lr}}"';
  return t(`sweepSubmit.problem.${problem.code}`, params);
}

/** /sweeps/new: a sweep file (the CLI's), previewed, then submitted in one request. */
export function SubmitSweepPage({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { message } = App.useApp();
  const [text, setText] = useState('');
  const [fileName, setFileName] = useState('');
  const [uploadError, setUploadError] = useState<string | null>(null);
  const pools = usePools();
  const projects = useProjects(tenant);
  // undefined: as the file says; null: none, cleared here; a number: picked here.
  const [project, setProject] = useState<number | null | undefined>(undefined);
  const submit = useSubmitSweep(tenant);
  const source = useDeferredValue(text);
  const file = useMemo(
    () =>
      pools.data === undefined || source.trim() === ''
        ? undefined
        : readSweepFile(source, pools.data, fileName),
    [source, pools.data, fileName],
  );
  const summary = file?.ok ? file.summary : undefined;
  // A refused submission's errors, by where they are shown; cleared once the text changes.
  const refused = submit.error
    ? sweepErrors(
        submit.error.errors,
        (summary?.parameters ?? []).map((p) => p.name),
      )
    : undefined;
  const general =
    refused === undefined
      ? []
      : refused.general.length === 0 &&
          refused.byParameter.size === 0 &&
          refused.template.length === 0
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
      if (read === null) setUploadError(t('sweepSubmit.notUtf8', { name: picked.name }));
      else change(read, picked.name);
    } catch {
      setUploadError(t('sweepSubmit.readFailed', { name: picked.name }));
    }
  };

  const onSubmit = () => {
    if (!file?.ok) return;
    submit.mutate(withProject(file.body, project), {
      onSuccess: (sweep) => {
        void message.success(t('sweepSubmit.submitted', { name: sweep.name }));
        void navigate(`/sweeps/${sweep.id}`);
      },
    });
  };

  return (
    <>
      <PageHeader title={t('sweepSubmit.title')} subtitle={t('sweepSubmit.subtitle')} />
      <SpecFileCard
        title={t('sweepSubmit.fileTitle')}
        uploadLabel={t('sweepSubmit.upload')}
        hint={t('sweepSubmit.fileHint', { placeholder: '{{x}}' })}
        label={t('sweepSubmit.fileLabel')}
        id="sweep-file"
        value={text}
        onChange={change}
        onUpload={(picked) => void upload(picked)}
        fromFile={fileName === '' ? undefined : t('sweepSubmit.fromFile', { name: fileName })}
        fromFileTestId="sweep-file-name"
        uploadError={uploadError}
        uploadErrorTestId="sweep-upload-error"
        placeholder={EXAMPLE}
        rows={16}
      />

      <Card title={t('sweepSubmit.preview')} style={{ marginTop: 16 }}>
        <SpecFilePreview
          pools={pools}
          file={file}
          emptyText={t('sweepSubmit.previewEmpty')}
          emptyTestId="sweep-preview-empty"
          problemsTitle={t('sweepSubmit.problemsTitle')}
          problemsTestId="sweep-problems"
          problemText={(problem) => problemText(t, problem)}
        >
          {(read, loaded) => (
            <>
              {refused !== undefined && (
                <Alert
                  type="error"
                  showIcon
                  style={{ marginBottom: 16 }}
                  title={t('sweepSubmit.notSubmitted')}
                  data-testid="sweep-submit-error"
                  description={
                    <>
                      {general.map((line, i) => (
                        <div key={i}>{line}</div>
                      ))}
                      {(refused.byParameter.size > 0 || refused.template.length > 0) && (
                        <div>{t('sweepSubmit.seeBelow')}</div>
                      )}
                    </>
                  }
                />
              )}
              <SweepOverview summary={read.summary} />
              <ParametersTable
                parameters={read.summary.parameters}
                refused={refused?.byParameter}
              />
              <TemplateSummary
                summary={read.summary}
                pools={loaded}
                refused={refused?.template ?? []}
              />
            </>
          )}
        </SpecFilePreview>
        <Space style={{ marginTop: 16 }} wrap>
          <Typography.Text>{t('projects.field')}</Typography.Text>
          <Select
            aria-label={t('projects.field')}
            data-testid="sweep-project"
            style={{ minWidth: 220 }}
            allowClear
            showSearch={{ optionFilterProp: 'label' }}
            placeholder={t('projects.none')}
            loading={projects.isPending}
            options={(projects.data ?? []).map((p) => ({ value: p.id, label: p.name }))}
            value={project === undefined ? summary?.project : (project ?? undefined)}
            onChange={(picked?: number) => {
              setProject(picked ?? null);
            }}
          />
          <Button type="primary" disabled={!file?.ok} loading={submit.isPending} onClick={onSubmit}>
            {t('sweepSubmit.submit')}
          </Button>
          <Button type="link" onClick={() => void navigate('/sweeps')}>
            {t('sweepSubmit.cancel')}
          </Button>
        </Space>
      </Card>
    </>
  );
}

/** The body with the project picked on the page, if one was: it replaces the file's, in the
 * sweep and its template (the server names the sweep's project in every trial's job). */
function withProject(body: SweepBody, project: number | null | undefined): SweepBody {
  if (project === undefined) return body;
  const template = { ...body.template };
  delete template.project;
  return { ...body, project, template };
}

/** The sweep's own fields, and how many trials it runs. */
function SweepOverview({ summary }: { summary: SweepSummary }) {
  const { t } = useTranslation();
  const metric = typeof summary.metric === 'string' ? summary.metric : '';
  return (
    <Descriptions column={{ xs: 1, md: 2 }} size="small" data-testid="sweep-overview">
      <Descriptions.Item label={t('sweeps.name')}>{summary.name}</Descriptions.Item>
      <Descriptions.Item label={t('sweeps.method')}>
        {t(`sweeps.methods.${summary.method}`)}
      </Descriptions.Item>
      <Descriptions.Item label={t('sweeps.trials')}>
        <span data-testid="sweep-trial-count">
          {t('sweepSubmit.trialCount', { count: summary.trials })} ·{' '}
          {summary.method === 'grid'
            ? t('sweepSubmit.gridTrials')
            : summary.method === 'tpe'
              ? t('sweepSubmit.tpeTrials', { count: summary.startupTrials })
              : t('sweepSubmit.randomTrials')}
        </span>
      </Descriptions.Item>
      <Descriptions.Item label={t('sweeps.parallel')}>
        {typeof summary.parallel === 'number'
          ? t('sweeps.parallelValue', { count: summary.parallel })
          : valueText(summary.parallel)}
      </Descriptions.Item>
      <Descriptions.Item label={t('sweeps.metric')}>
        <span data-testid="sweep-metric">
          {metricText(t, metric, summary.goal, summary.rankBy)}
        </span>
      </Descriptions.Item>
      <Descriptions.Item label={t('sweeps.seed')}>
        {summary.seed === undefined ? t('sweepSubmit.seedChosen') : valueText(summary.seed)}
      </Descriptions.Item>
      <Descriptions.Item label={t('sweeps.earlyStop')}>
        <span data-testid="sweep-early-stop">{earlyStopText(t, summary)}</span>
      </Descriptions.Item>
    </Descriptions>
  );
}

function valuesText(t: TFunction, param: ParameterSummary): string {
  if (param.kind === 'values') return param.values.map(valueText).join(', ');
  const [low, high] = param.values;
  return t('sweepSubmit.range', { low: valueText(low), high: valueText(high) });
}

function ParametersTable({
  parameters,
  refused,
}: {
  parameters: ParameterSummary[];
  /** A refused submission's errors, by parameter. */
  refused: Map<string, string[]> | undefined;
}) {
  const { t } = useTranslation();
  const columns: ColumnsType<ParameterSummary> = [
    {
      title: t('sweepSubmit.parameter'),
      dataIndex: 'name',
      render: (name: string) => {
        const errors = refused?.get(name) ?? [];
        return (
          <>
            <Typography.Text strong style={{ fontFamily: MONOSPACE }}>
              {name}
            </Typography.Text>
            {errors.length > 0 && (
              <ul
                style={{ margin: '4px 0 0', paddingLeft: 18 }}
                data-testid={`param-errors-${name}`}
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
      title: t('sweepSubmit.kind'),
      dataIndex: 'kind',
      render: (kind: ParameterSummary['kind']) => t(`sweepSubmit.kinds.${kind}`),
    },
    {
      title: t('sweepSubmit.values'),
      key: 'values',
      render: (_, param) => valuesText(t, param),
    },
  ];
  return (
    <Table<ParameterSummary>
      rowKey="name"
      size="small"
      style={{ marginTop: 16 }}
      title={() => <Typography.Text strong>{t('sweepSubmit.parameters')}</Typography.Text>}
      data-testid="sweep-parameters"
      columns={columns}
      dataSource={parameters}
      pagination={false}
    />
  );
}

function poolLabel(id: number | undefined, pools: Pool[]): string {
  if (id === undefined) return '—';
  const pool = pools.find((p) => p.id === id);
  return pool === undefined ? `#${id}` : poolRef(pool, pools);
}

/** A command or args list as one line, as written. */
function itemsText(items: unknown): string | undefined {
  if (items === undefined || items === null) return undefined;
  if (Array.isArray(items)) return items.map((item) => valueText(item)).join(' ');
  return valueText(items);
}

/** What every trial's job is: its pool, image, accelerators, command and arguments. */
function TemplateSummary({
  summary,
  pools,
  refused,
}: {
  summary: SweepSummary;
  pools: Pool[];
  /** A refused submission's template errors, as `field: message`. */
  refused: string[];
}) {
  const { t } = useTranslation();
  const { devices, acceleratorModel, sizedBy } = summary;
  const count =
    sizedBy.length > 0
      ? t('sweepSubmit.sizedBy', { names: sizedBy.join(', ') })
      : devices === undefined
        ? '—'
        : devicesLabel({ requested_devices: devices.whole, requested_milli: devices.milli });
  const accelerators =
    typeof acceleratorModel === 'string' && devices !== undefined
      ? `${count} × ${acceleratorModel}`
      : count;
  const command = itemsText(summary.command);
  const args = itemsText(summary.args);
  return (
    <Card
      size="small"
      type="inner"
      title={t('sweepSubmit.template')}
      style={{ marginTop: 16 }}
      data-testid="sweep-template-summary"
    >
      {refused.length > 0 && (
        <Alert
          type="error"
          style={{ marginBottom: 12 }}
          title={t('sweepSubmit.templateErrors')}
          description={
            <ul style={{ margin: 0, paddingLeft: 18 }} data-testid="template-errors">
              {refused.map((line, i) => (
                <li key={i}>{line}</li>
              ))}
            </ul>
          }
        />
      )}
      <Descriptions column={1} size="small">
        <Descriptions.Item label={t('sweepSubmit.pool')}>
          {poolLabel(summary.pool, pools)}
        </Descriptions.Item>
        <Descriptions.Item label={t('sweepSubmit.image')}>
          {summary.image === undefined ? '—' : valueText(summary.image)}
        </Descriptions.Item>
        <Descriptions.Item label={t('sweepSubmit.accelerators')}>{accelerators}</Descriptions.Item>
        <Descriptions.Item label={t('sweepSubmit.command')}>
          {command === undefined ? (
            <Typography.Text type="secondary">{t('sweepSubmit.entrypoint')}</Typography.Text>
          ) : (
            <Typography.Text code data-testid="template-command">
              {command}
            </Typography.Text>
          )}
        </Descriptions.Item>
        <Descriptions.Item label={t('sweepSubmit.args')}>
          {args === undefined ? (
            '—'
          ) : (
            <Typography.Text code data-testid="template-args">
              {args}
            </Typography.Text>
          )}
        </Descriptions.Item>
      </Descriptions>
    </Card>
  );
}
