import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  Alert,
  Button,
  Card,
  Checkbox,
  Descriptions,
  Empty,
  Form,
  type FormInstance,
  InputNumber,
  Progress,
  Result,
  Space,
  Table,
  Tag,
  Typography,
} from 'antd';
import { useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/PageHeader';
import { QueryTable } from '../../components/QueryTable';
import { api, unwrap } from '../../lib/api';
import type { WhatIfRun, WhatIfSubmit } from '../../lib/apiTypes';
import { POLICIES } from './whatIfRows';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { applyServerErrors } from '../../lib/formErrors';
import { useTenant } from '../tenancy/useTenant';
import {
  changesSummary,
  outageBands,
  policyLabel,
  resultRows,
  signed,
  type ResultRow,
} from './whatIfRows';
import { WhatIfChart, type WhatIfLine } from './WhatIfChart';
import { QuotaChangeRows } from './QuotaChanges';
import { quotaChanges, quotaKey, type QuotaChangeValue } from './whatIfQuotas';
import { NodeChangeRows } from './NodeChanges';
import { MaintenanceRows, type MaintenanceValue } from './MaintenanceRows';
import { CompareRuns } from './CompareRuns';
import { useAllQuotas } from '../quotas/api';
import { usePools } from '../jobs/api';
import { WorkerRunStateTag } from '../../components/WorkerRunStateTag';

const RUNS_KEY = ['what-if', 'runs'];

function useRuns() {
  return useQuery({
    queryKey: RUNS_KEY,
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/scheduling/what-if/', { params: { query: { page_size: 20 } }, signal }),
      ),
    // Poll while a replay is under way; a finished list does not change by itself.
    refetchInterval: (query) =>
      query.state.data?.results.some((r) => r.state === 'pending' || r.state === 'running')
        ? 2_000
        : false,
  });
}

export function WhatIfPage() {
  const { t } = useTranslation();
  const tenant = useTenant();
  if (!tenant.isPlatformAdmin) {
    return (
      <Card>
        <Result status="403" title={t('whatif.adminOnly')} subTitle={t('whatif.adminOnlyHint')} />
      </Card>
    );
  }
  return <WhatIfOverview />;
}

function WhatIfOverview() {
  const { t } = useTranslation();
  const runs = useRuns();
  const pools = usePools();
  const poolNames = new Map((pools.data ?? []).map((p) => [p.id, `${p.cluster}/${p.name}`]));
  const [form] = Form.useForm<FormValues>();
  const formTop = useRef<HTMLDivElement>(null);
  const [chosen, setChosen] = useState<number | null>(null);
  const [ticked, setTicked] = useState<number[]>([]);
  const list = runs.data?.results ?? [];
  const shown = list.find((r) => r.id === chosen) ?? list.find((r) => r.state === 'done');
  const comparable = (run: WhatIfRun) => run.state === 'done' && Boolean(run.result?.jobs);
  // In the list's order, newest first; runs that left the page's list drop out.
  const compared = list.filter((r) => ticked.includes(r.id) && comparable(r));
  return (
    <>
      <PageHeader title={t('whatif.title')} subtitle={t('whatif.subtitle')} />
      <Space orientation="vertical" size={16} style={{ width: '100%' }}>
        <div ref={formTop}>
          <StartForm form={form} onStarted={setChosen} />
        </div>
        <Card title={t('whatif.runs')}>
          <QueryTable<WhatIfRun>
            query={runs}
            rows={list}
            rowKey="id"
            size="small"
            pagination={false}
            onRow={(run) => ({
              onClick: (event) => {
                // Ticking a run for the comparison does not open it.
                if ((event.target as HTMLElement).closest('.ant-table-selection-column')) return;
                setChosen(run.id);
              },
              // The run shown below in bold: the highlight of a row is for ticked ones.
              style: { cursor: 'pointer', fontWeight: run.id === shown?.id ? 600 : undefined },
              'aria-current': run.id === shown?.id ? 'true' : undefined,
            })}
            rowSelection={{
              selectedRowKeys: ticked,
              onChange: (keys) => {
                setTicked(keys.map(Number));
              },
              getCheckboxProps: (run) => ({
                disabled: !comparable(run),
                'aria-label': t('whatif.compareRun', { id: run.id }),
              }),
            }}
            columns={[
              { title: '#', dataIndex: 'id', width: 64 },
              {
                title: t('whatif.created'),
                dataIndex: 'created_at',
                render: (v: string) => formatDateTime(v, currentLanguage()),
              },
              { title: t('whatif.hours'), dataIndex: 'hours', width: 90 },
              {
                title: t('whatif.policies'),
                dataIndex: 'policies',
                render: (v: string[]) => v.map((p) => policyLabel(t, p)).join(', '),
              },
              {
                // What the replay changed, so runs of several sizes can be told apart.
                title: t('whatif.changesColumn'),
                key: 'changes',
                render: (_: unknown, run: WhatIfRun) => changesSummary(t, run, poolNames),
              },
              {
                title: t('whatif.state'),
                key: 'state',
                width: 220,
                render: (_: unknown, run: WhatIfRun) =>
                  run.state === 'running' ? (
                    <Progress percent={Math.round(run.progress * 100)} size="small" />
                  ) : (
                    <WorkerRunStateTag state={run.state} />
                  ),
              },
            ]}
          />
          {compared.length < 2 && list.filter(comparable).length >= 2 && (
            <Typography.Paragraph type="secondary" style={{ marginTop: 12, marginBottom: 0 }}>
              {t('whatif.compareHint')}
            </Typography.Paragraph>
          )}
        </Card>
        {compared.length >= 2 && <CompareRuns runs={compared} poolNames={poolNames} />}
        {shown ? (
          <RunResult
            run={shown}
            onReuse={(run) => {
              form.setFieldsValue(formValuesOf(run));
              // Where the form is: the next question starts there (jsdom has no scrolling).
              const el = formTop.current;
              if (el && 'scrollIntoView' in el) el.scrollIntoView({ behavior: 'smooth' });
            }}
          />
        ) : null}
      </Space>
    </>
  );
}

interface NodeChangeValue {
  pool?: number;
  nodes?: number;
}

interface FormValues {
  hours: number;
  policies: string[];
  seed: number;
  load_factor: number;
  replay_faults: boolean;
  node_changes?: NodeChangeValue[];
  quota_changes?: QuotaChangeValue[];
  maintenance?: MaintenanceValue[];
}

/** A run's settings as the form's values, to ask a next question from them. */
function formValuesOf(run: WhatIfRun): FormValues {
  return {
    hours: run.hours,
    policies: run.policies,
    seed: run.seed,
    load_factor: run.load_factor,
    replay_faults: run.replay_faults,
    maintenance: (run.maintenance ?? []).map((m) => ({ ...m })),
    node_changes: (run.node_changes ?? []).map((c) => ({ pool: c.pool, nodes: c.nodes })),
    quota_changes: (run.quota_changes ?? []).map((c) => ({
      quota: quotaKey(c),
      guarantee: c.guarantee,
      borrow_limit: c.borrow_limit,
    })),
  };
}

function StartForm({
  form,
  onStarted,
}: {
  form: FormInstance<FormValues>;
  onStarted: (id: number) => void;
}) {
  const { t } = useTranslation();
  const [problems, setProblems] = useState<string[]>([]);
  const quotas = useAllQuotas(true);
  const client = useQueryClient();
  const start = useMutation({
    mutationFn: (body: WhatIfSubmit) => unwrap(api.POST('/api/v1/scheduling/what-if/', { body })),
    onSuccess: (run) => {
      setProblems([]);
      onStarted(run.id);
      void client.invalidateQueries({ queryKey: RUNS_KEY });
    },
    onError: (error) => {
      const changes = form.getFieldValue('node_changes') as NodeChangeValue[] | undefined;
      const quotaRows = form.getFieldValue('quota_changes') as QuotaChangeValue[] | undefined;
      const windows = form.getFieldValue('maintenance') as MaintenanceValue[] | undefined;
      const known = [
        ['hours'],
        ['policies'],
        ['seed'],
        ['load_factor'],
        ['replay_faults'],
        ...(changes ?? []).flatMap((_, i) => [
          ['node_changes', i, 'pool'],
          ['node_changes', i, 'nodes'],
        ]),
        ...(quotaRows ?? []).flatMap((_, i) => [
          ['quota_changes', i, 'guarantee'],
          ['quota_changes', i, 'borrow_limit'],
        ]),
        ...(windows ?? []).flatMap((_, i) =>
          ['pool', 'nodes', 'start_h', 'hours'].map((f) => ['maintenance', i, f]),
        ),
      ];
      setProblems(applyServerErrors(form, error, known).unmatched);
    },
  });
  return (
    <Card title={t('whatif.start')}>
      <Typography.Paragraph type="secondary">{t('whatif.explain')}</Typography.Paragraph>
      <Form<FormValues>
        form={form}
        layout="inline"
        initialValues={{
          hours: 168,
          policies: [...POLICIES],
          seed: 0,
          load_factor: 1,
          replay_faults: true,
        }}
        onFinish={(values) => {
          start.mutate({
            hours: values.hours,
            policies: values.policies as WhatIfSubmit['policies'],
            seed: values.seed,
            load_factor: values.load_factor,
            replay_faults: values.replay_faults,
            node_changes: (values.node_changes ?? []).map((c) => ({
              pool: c.pool ?? 0,
              nodes: c.nodes ?? 0,
            })),
            quota_changes: quotaChanges(values.quota_changes, quotas.data ?? []),
            maintenance: (values.maintenance ?? []).map((m) => ({
              pool: m.pool ?? 0,
              nodes: m.nodes ?? 0,
              start_h: m.start_h ?? 0,
              hours: m.hours ?? 0,
              drain: m.drain ?? true,
            })),
          });
        }}
      >
        <Form.Item label={t('whatif.hours')} name="hours" rules={[{ required: true }]}>
          <InputNumber min={0.1} max={2160} step={24} style={{ width: 110 }} />
        </Form.Item>
        {/* An inline form's items do not shrink: capped at the row's width, the checkboxes
            wrap instead of widening a phone's page. */}
        <Form.Item
          label={t('whatif.policies')}
          name="policies"
          style={{ maxWidth: '100%' }}
          rules={[{ required: true, type: 'array', min: 1, message: t('whatif.pickPolicy') }]}
        >
          <Checkbox.Group
            style={{ flexWrap: 'wrap', rowGap: 4 }}
            options={POLICIES.map((p) => ({ value: p, label: policyLabel(t, p) }))}
          />
        </Form.Item>
        <Form.Item label={t('whatif.seed')} name="seed">
          <InputNumber min={0} style={{ width: 90 }} />
        </Form.Item>
        <Form.Item
          label={t('whatif.load')}
          name="load_factor"
          tooltip={t('whatif.loadHint')}
          rules={[{ required: true }]}
        >
          <InputNumber min={0.1} max={5} step={0.1} prefix="×" style={{ width: 90 }} />
        </Form.Item>
        <Form.Item name="replay_faults" valuePropName="checked" tooltip={t('whatif.faultsHint')}>
          <Checkbox>{t('whatif.faultsReplay')}</Checkbox>
        </Form.Item>
        <Form.Item>
          <Button type="primary" htmlType="submit" loading={start.isPending}>
            {t('whatif.run')}
          </Button>
        </Form.Item>
        {/* Capacity: replay on the cluster with some pools grown or shrunk. */}
        <NodeChangeRows />
        <QuotaChangeRows form={form} />
        {/* Maintenance: some servers out of service from a chosen time. */}
        <MaintenanceRows />
      </Form>
      {problems.length > 0 ? (
        <Alert type="error" showIcon style={{ marginTop: 12 }} title={problems.join(' ')} />
      ) : null}
    </Card>
  );
}

function RunResult({ run, onReuse }: { run: WhatIfRun; onReuse: (run: WhatIfRun) => void }) {
  const { t } = useTranslation();
  const title = `${t('whatif.result')} #${run.id}`;
  if (run.state === 'failed') {
    return (
      <Card title={title}>
        <Alert type="error" showIcon title={t('whatif.failed')} description={run.message} />
      </Card>
    );
  }
  if (run.state !== 'done' || !run.result) {
    return (
      <Card title={title}>
        <Progress percent={Math.round(run.progress * 100)} />
      </Card>
    );
  }
  const result = run.result;
  if (result.jobs === 0) {
    return (
      <Card title={title}>
        <Empty description={t('whatif.noJobs')} />
      </Card>
    );
  }
  const rows = resultRows(t, result, currentLanguage());
  const tenantRows = rows.some((r) => r.key.startsWith('tenant-'));
  // Waits side by side mislead where some columns kept the quotas and others did not (the
  // baselines are modelled without them). Runs stored before this was recorded say nothing.
  const quotaNote =
    result.policies.some((p) => p.keeps_quotas === true) &&
    result.policies.some((p) => p.keeps_quotas === false);
  const changes = result.capacity_changes ?? [];
  const quotaRows = result.quota_changes ?? [];
  const load = result.load_change;
  const faults = result.faults;
  const windows = result.maintenance ?? [];
  // The real cluster had them whether or not the replay did: they shade the chart either way,
  // with the maintenance windows the replay added.
  const bands = outageBands([
    ...(faults?.spans ?? []),
    ...windows.map((m) => ({ start_h: m.start_h, end_h: m.start_h + m.hours })),
  ]);
  // Runs stored before the series were recorded have none: no chart then.
  const lines: WhatIfLine[] = result.policies
    .filter((p) => p.series?.length)
    .map((p) => ({ name: policyLabel(t, p.policy), points: p.series ?? [] }));
  if (lines.length && result.actual_series?.length) {
    lines.push({ name: t('whatif.actual'), points: result.actual_series, actual: true });
  }
  const chartLabel = t('whatif.chart.label', { names: lines.map((l) => l.name).join(', ') });
  return (
    <Card
      title={title}
      data-testid="whatif-result"
      extra={
        <Button
          onClick={() => {
            onReuse(run);
          }}
        >
          {t('whatif.reuse')}
        </Button>
      }
    >
      <Descriptions size="small" column={4} style={{ marginBottom: 16 }}>
        <Descriptions.Item label={t('whatif.window')}>
          {run.window_start && run.window_end
            ? `${formatDateTime(run.window_start, currentLanguage())} – ${formatDateTime(run.window_end, currentLanguage())}`
            : '—'}
        </Descriptions.Item>
        <Descriptions.Item label={t('whatif.jobs')}>{result.jobs}</Descriptions.Item>
        <Descriptions.Item label={t('whatif.neverStarted')}>
          {result.never_started}
        </Descriptions.Item>
        <Descriptions.Item label={t('whatif.cluster')}>
          {t('whatif.clusterSize', { nodes: result.nodes, gpus: result.accelerators })}
        </Descriptions.Item>
        {changes.length > 0 && (
          <Descriptions.Item label={t('whatif.changes')} span={4}>
            <Space wrap>
              {changes.map((c) => (
                <Tag key={c.pool} color={c.nodes > 0 ? 'green' : 'orange'}>
                  {t('whatif.changeTag', {
                    pool: c.pool,
                    nodes: signed(c.nodes),
                    gpus: signed(c.accelerators),
                  })}
                </Tag>
              ))}
            </Space>
          </Descriptions.Item>
        )}
        {quotaRows.length > 0 && (
          <Descriptions.Item label={t('whatif.quotasChanged')} span={4}>
            <Space wrap>
              {quotaRows.map((q) => (
                <Tag key={`${q.tenant}|${q.pool}|${q.accelerator_model}`} color="blue">
                  {t('whatif.quotaTag', {
                    tenant: q.tenant,
                    pool: q.pool,
                    model: q.accelerator_model,
                    was:
                      q.was_guarantee === null
                        ? t('whatif.noQuota')
                        : `${q.was_guarantee} + ${q.was_borrow_limit ?? 0}`,
                    now: `${q.guarantee} + ${q.borrow_limit}`,
                  })}
                </Tag>
              ))}
            </Space>
          </Descriptions.Item>
        )}
        {load && (
          <Descriptions.Item label={t('whatif.loadChanged')} span={4}>
            <Tag color={load.factor > 1 ? 'purple' : 'cyan'}>
              {t('whatif.loadTag', {
                factor: load.factor,
                added: load.jobs_added,
                dropped: load.jobs_dropped,
              })}
            </Tag>
          </Descriptions.Item>
        )}
        {windows.length > 0 && (
          <Descriptions.Item label={t('whatif.maintenanceChanged')} span={4}>
            <Space wrap>
              {windows.map((m, i) => (
                <Tag key={i} color="gold">
                  {t('whatif.maintenanceTag', {
                    pool: m.pool,
                    nodes: m.nodes,
                    start: m.start_h,
                    hours: m.hours,
                    how: t(m.drain ? 'whatif.maintenanceDrained' : 'whatif.maintenanceCordoned'),
                  })}
                </Tag>
              ))}
            </Space>
          </Descriptions.Item>
        )}
        {faults && (faults.outages > 0 || !faults.replayed) && (
          <Descriptions.Item label={t('whatif.faults')} span={4}>
            <Space wrap>
              {t('whatif.faultsTag', {
                outages: faults.outages,
                drained: faults.drained,
                hours: faults.node_hours.toFixed(1),
              })}
              <Tag color={faults.replayed ? 'red' : 'green'}>
                {t(faults.replayed ? 'whatif.faultsReplayed' : 'whatif.faultsLeftOut')}
              </Tag>
            </Space>
          </Descriptions.Item>
        )}
      </Descriptions>
      {changes.length > 0 && (
        <Typography.Paragraph type="secondary">{t('whatif.changesNote')}</Typography.Paragraph>
      )}
      {load && <Typography.Paragraph type="secondary">{t('whatif.loadNote')}</Typography.Paragraph>}
      {quotaNote && (
        <Typography.Paragraph type="secondary" data-testid="whatif-quota-note">
          {t('whatif.quotaNote')}
        </Typography.Paragraph>
      )}
      <Table<ResultRow>
        size="small"
        pagination={false}
        rowKey="key"
        dataSource={rows}
        columns={[
          { title: t('whatif.measure'), dataIndex: 'measure', width: 260 },
          ...result.policies.map((p, i) => ({
            title:
              p.policy === result.live_policy ? (
                <Space size={4}>
                  {policyLabel(t, p.policy)}
                  <Tag color="geekblue" title={t('whatif.liveHint')}>
                    {t('whatif.live')}
                  </Tag>
                </Space>
              ) : (
                policyLabel(t, p.policy)
              ),
            key: p.policy,
            render: (_: unknown, row: ResultRow) => row.cells[i],
          })),
          {
            title: t('whatif.actual'),
            key: 'actual',
            render: (_: unknown, row: ResultRow) => row.actual ?? '—',
          },
        ]}
      />
      {lines.length > 0 && run.window_start && (
        <div style={{ marginTop: 16 }}>
          <WhatIfChart
            start={run.window_start}
            lines={lines}
            names={{
              allocation: t('whatif.chart.allocation'),
              waiting: t('whatif.chart.waiting'),
              outages: t('whatif.chart.outages'),
            }}
            label={
              bands.length
                ? t('whatif.chart.outagesLabel', { label: chartLabel, count: bands.length })
                : chartLabel
            }
            outages={bands}
          />
        </div>
      )}
      {tenantRows && (
        <Typography.Paragraph type="secondary" style={{ marginTop: 12, marginBottom: 0 }}>
          {t('whatif.tenantNote')}
        </Typography.Paragraph>
      )}
    </Card>
  );
}
