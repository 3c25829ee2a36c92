import { Alert, Card, Empty, Select, Space, Typography } from 'antd';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { CursorPager } from '../../components/CursorPager';
import { NameSearch } from '../../components/NameSearch';
import { PageHeader } from '../../components/PageHeader';
import { QueryTable } from '../../components/QueryTable';
import { useCursorPages } from '../../lib/cursorPages';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { type Run, type RunFilters, useRuns, useRunsById } from './api';
import { CompareRuns } from './CompareRuns';
import { RunStateTag } from './RunPanels';
import { formatParam, lastValue, metricNames, parseRunIds } from './runData';

const STATES = ['running', 'finished', 'failed', 'cancelled'] as const;

export function CompareRunsPage({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const [params, setParams] = useSearchParams();
  const [filters, setFilters] = useState<RunFilters>({});
  const selectedIds = useMemo(() => parseRunIds(params.get('runs')), [params]);
  const pages = useCursorPages(JSON.stringify(filters));
  const runs = useRuns(tenant, filters, pages.cursor);
  const listed = runs.data?.results ?? [];

  // Runs named by a deep link but not on the list page (older, or filtered out) by id.
  const missing = runs.isSuccess
    ? selectedIds.filter((id) => !listed.some((run) => run.id === id))
    : [];
  const extra = useRunsById(tenant, missing);
  const selected = selectedIds
    .map((id) => listed.find((run) => run.id === id) ?? extra.find((q) => q.data?.id === id)?.data)
    .filter((run): run is Run => run !== undefined);
  const missingFailed = extra.filter((q) => q.isError).length;

  const select = (ids: number[]) => {
    const next = new URLSearchParams(params);
    if (ids.length === 0) next.delete('runs');
    else next.set('runs', ids.join(','));
    setParams(next, { replace: true });
  };
  const lossKey = metricNames(listed).find((name) => /loss/i.test(name));

  return (
    <>
      <PageHeader title={t('experiments.title')} subtitle={t('experiments.subtitle')} />
      <Card
        title={t('experiments.runs')}
        style={{ marginBottom: 16 }}
        extra={
          <Space wrap>
            <NameSearch
              label={t('experiments.searchName')}
              onSearch={(name) => {
                setFilters((f) => ({ ...f, name }));
              }}
            />
            <Select
              allowClear
              aria-label={t('runs.stateLabel')}
              placeholder={t('runs.stateLabel')}
              style={{ width: 160 }}
              value={filters.state}
              onChange={(value: Run['state']) => {
                setFilters((f) => ({ ...f, state: value }));
              }}
              options={STATES.map((s) => ({ value: s, label: t(`runs.state.${s}`) }))}
            />
          </Space>
        }
      >
        <QueryTable<Run>
          data-testid="runs-table"
          size="small"
          rowKey="id"
          query={runs}
          rows={listed}
          pagination={false}
          scroll={{ x: 'max-content' }}
          rowSelection={{
            selectedRowKeys: selectedIds,
            preserveSelectedRowKeys: true,
            onChange: (keys) => {
              // Keep the order runs were picked in: it is their colour order in the charts.
              const picked = keys.map(Number);
              select([
                ...selectedIds.filter((id) => picked.includes(id)),
                ...picked.filter((id) => !selectedIds.includes(id)),
              ]);
            },
            getCheckboxProps: (run) => ({
              'aria-label': t('experiments.selectRun', { name: run.name }),
            }),
          }}
          locale={{ emptyText: <Empty description={t('experiments.empty')} /> }}
          columns={[
            { title: 'ID', dataIndex: 'id', render: (id: number) => `#${id}` },
            {
              title: t('runs.name'),
              dataIndex: 'name',
              // Sweep names run long: one line, cut with an ellipsis, whole in the tooltip.
              render: (name: string, run) => (
                <Typography.Text ellipsis={{ tooltip: name }} style={{ maxWidth: 240 }}>
                  <Link to={`/experiments/runs/${run.id}`}>{name}</Link>
                </Typography.Text>
              ),
            },
            {
              title: t('runs.stateLabel'),
              key: 'state',
              render: (_, run) => <RunStateTag state={run.state} />,
            },
            {
              title: t('runs.job'),
              dataIndex: 'job',
              render: (job: number | null) =>
                job === null ? '—' : <Link to={`/jobs/${job}`}>#{job}</Link>,
            },
            { title: t('runs.owner'), dataIndex: 'owner' },
            {
              title:
                lossKey === undefined
                  ? t('runs.kpiLoss')
                  : t('experiments.lastOf', { key: lossKey }),
              key: 'loss',
              render: (_, run) =>
                lossKey === undefined ? '—' : formatParam(lastValue(run, lossKey)),
            },
            {
              title: t('runs.created'),
              dataIndex: 'created_at',
              render: (at: string) => formatDateTime(at, language),
            },
          ]}
        />
        <CursorPager pages={pages} query={runs} testId="runs-page" size="small" />
      </Card>
      {missingFailed > 0 && (
        <Alert
          type="warning"
          showIcon
          style={{ marginBottom: 16 }}
          title={t('experiments.missingRuns', { count: missingFailed })}
        />
      )}
      {selected.length === 0 ? (
        <Card>
          <Empty description={t('experiments.selectHint')} data-testid="compare-empty" />
        </Card>
      ) : (
        <Space orientation="vertical" size={16} style={{ width: '100%' }}>
          {selected.length === 1 && (
            <Typography.Text type="secondary">{t('experiments.selectMore')}</Typography.Text>
          )}
          <CompareRuns tenant={tenant} runs={selected} />
        </Space>
      )}
    </>
  );
}
