import { App, Empty, Form, Select, Space, Table, Tag, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CreateButton } from '../../components/CreateButton';
import { CursorPager } from '../../components/CursorPager';
import { FormModal } from '../../components/FormModal';
import { QueryTable } from '../../components/QueryTable';
import { WorkerRunStateTag } from '../../components/WorkerRunStateTag';
import type { ProbeRun } from '../../lib/apiTypes';
import { useCursorPages } from '../../lib/cursorPages';
import { formatDateTime } from '../../lib/format';
import { applyServerErrors } from '../../lib/formErrors';
import { currentLanguage } from '../../lib/i18n';
import { usePools } from '../jobs/api';
import { useProbeRuns, useStartProbe } from './consoleApi';
import { poolOptions } from '../../lib/poolOptions';

type Round = ProbeRun['rounds'][number];

/** One probed pair of a round as the server stores it: `[a, b, GB/s | null]`. */
interface PairRow {
  key: number;
  a: string;
  b: string;
  gbps: number | null;
}

function pairRows(round: Round): PairRow[] {
  return round.pairs.map(([a, b, gbps], key) => ({
    key,
    a: String(a),
    b: String(b),
    gbps: typeof gbps === 'number' ? gbps : null,
  }));
}

/**
 * Health > Slow-node probes: searches of a pool for nodes that drag collective bandwidth down,
 * in a few rounds of parallel pairwise probes (screen, re-pair, confirm). A run's nodes found
 * slow are cordoned with a `slow_node` incident; each round's pairs show what was measured.
 */
export function ProbeRunsTab() {
  const { t } = useTranslation();
  const language = currentLanguage();
  const pages = useCursorPages('probe-runs');
  const runs = useProbeRuns(pages.cursor);
  const pools = usePools();
  const poolName = (id: number) => pools.data?.find((p) => p.id === id)?.name ?? `#${id}`;
  const [starting, setStarting] = useState(false);
  return (
    <Space orientation="vertical" size={12} style={{ width: '100%' }}>
      <Space style={{ width: '100%', justifyContent: 'space-between' }}>
        <Typography.Text type="secondary">{t('probes.hint')}</Typography.Text>
        <CreateButton
          label={t('probes.start')}
          onClick={() => {
            setStarting(true);
          }}
        />
      </Space>
      <QueryTable<ProbeRun>
        rowKey="id"
        size="small"
        data-testid="probe-runs"
        query={runs}
        rows={runs.data?.results ?? []}
        pagination={false}
        locale={{ emptyText: <Empty description={t('probes.empty')} /> }}
        expandable={{
          rowExpandable: (run) => run.rounds.length > 0,
          expandedRowRender: (run) => <Rounds run={run} />,
        }}
        columns={[
          { title: '#', dataIndex: 'id' },
          { title: t('probes.pool'), dataIndex: 'pool', render: (id: number) => poolName(id) },
          {
            title: t('probes.state'),
            dataIndex: 'state',
            render: (s: ProbeRun['state']) => <WorkerRunStateTag state={s} />,
          },
          { title: t('probes.runner'), dataIndex: 'runner' },
          { title: t('probes.nodes'), dataIndex: 'nodes' },
          {
            title: t('probes.slowNodes'),
            dataIndex: 'slow_nodes',
            render: (slow: string[], run) =>
              run.state !== 'done'
                ? '—'
                : slow.length === 0
                  ? t('probes.noneSlow')
                  : slow.map((n) => (
                      <Tag key={n} color="red">
                        {n}
                      </Tag>
                    )),
          },
          { title: t('probes.message'), dataIndex: 'message' },
          {
            title: t('probes.started'),
            dataIndex: 'created_at',
            render: (at: string) => formatDateTime(at, language),
          },
          {
            title: t('probes.finished'),
            dataIndex: 'finished_at',
            render: (at: string | null) => (at === null ? '—' : formatDateTime(at, language)),
          },
        ]}
      />
      <CursorPager pages={pages} query={runs} testId="probe-runs" size="small" />
      {starting && (
        <StartModal
          onClose={() => {
            setStarting(false);
          }}
        />
      )}
    </Space>
  );
}

/** A run's rounds: each pair's bandwidth as a share of the round's healthy reference. */
function Rounds({ run }: { run: ProbeRun }) {
  const { t } = useTranslation();
  const slow = new Set(run.slow_nodes);
  return (
    <Space
      orientation="vertical"
      size={12}
      style={{ width: '100%' }}
      data-testid={`rounds-${run.id}`}
    >
      {run.rounds.map((round, i) => (
        <div key={i}>
          <Typography.Text strong>
            {t('probes.round', {
              n: i + 1,
              purpose: t(`probes.purpose_${round.purpose}`, { defaultValue: round.purpose }),
              reference: round.reference_gbps.toFixed(1),
            })}
          </Typography.Text>
          <Table<PairRow>
            size="small"
            pagination={false}
            dataSource={pairRows(round)}
            columns={[
              {
                title: t('probes.pair'),
                key: 'pair',
                render: (_, p) =>
                  [p.a, p.b].map((n) => (
                    <Tag key={n} color={slow.has(n) ? 'red' : undefined}>
                      {n}
                    </Tag>
                  )),
              },
              {
                title: t('probes.bandwidth'),
                dataIndex: 'gbps',
                render: (gbps: number | null) =>
                  gbps === null ? (
                    <Typography.Text type="warning">{t('probes.failedProbe')}</Typography.Text>
                  ) : (
                    `${gbps.toFixed(1)} GB/s`
                  ),
              },
              {
                title: t('probes.ofReference'),
                key: 'share',
                render: (_, p) =>
                  p.gbps === null || round.reference_gbps <= 0
                    ? '—'
                    : `${Math.round((100 * p.gbps) / round.reference_gbps)}%`,
              },
            ]}
          />
        </div>
      ))}
    </Space>
  );
}

function StartModal({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<{ pool: number }>();
  const pools = usePools();
  const start = useStartProbe();
  return (
    <FormModal
      title={t('probes.start')}
      okText={t('probes.startOk')}
      form={form}
      pending={start.isPending}
      onClose={onClose}
    >
      <Form<{ pool: number }>
        form={form}
        layout="vertical"
        onFinish={({ pool }) => {
          start.mutate(pool, {
            onSuccess: (run) => {
              void message.success(t('probes.started_toast', { id: run.id }));
              onClose();
            },
            onError: (error) => {
              const { unmatched } = applyServerErrors(form, error, [['pool']]);
              if (unmatched.length > 0) void message.error(unmatched.join(' '));
            },
          });
        }}
      >
        <Form.Item
          name="pool"
          label={t('probes.pool')}
          extra={t('probes.poolHelp')}
          rules={[{ required: true }]}
        >
          <Select loading={pools.isPending} options={poolOptions(pools.data)} />
        </Form.Item>
      </Form>
    </FormModal>
  );
}
