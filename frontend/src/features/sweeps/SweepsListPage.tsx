import { PlusOutlined, ReloadOutlined } from '@ant-design/icons';
import { Button, Card, Empty, Select, Space, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { CursorPager } from '../../components/CursorPager';
import { PageHeader } from '../../components/PageHeader';
import { QueryTable } from '../../components/QueryTable';
import type { Sweep, SweepState } from '../../lib/apiTypes';
import { useCursorPages } from '../../lib/cursorPages';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { useSweeps, type SweepFilters } from './api';
import { valueText } from './sweepData';
import { SweepProgress } from './SweepProgress';
import { SweepStateTag } from './SweepStateTag';

const STATES: SweepState[] = ['running', 'finished', 'cancelled', 'stopped'];

export function SweepsListPage({ tenant, canWrite }: { tenant: string; canWrite: boolean }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const language = currentLanguage();
  const [filters, setFilters] = useState<SweepFilters>({});
  const pages = useCursorPages(`${tenant} ${JSON.stringify(filters)}`);
  const sweeps = useSweeps(tenant, filters, pages.cursor);
  const rows = sweeps.data?.results ?? [];
  // Sweeps rank by their own metric: the header names it when the page's sweeps share one,
  // and each cell names it otherwise.
  const metrics = new Set(rows.map((s) => s.metric ?? '').filter((m) => m !== ''));
  const [shared] = metrics.size === 1 ? [...metrics] : [];

  const columns: ColumnsType<Sweep> = [
    {
      title: t('sweeps.name'),
      dataIndex: 'name',
      render: (name: string, sweep) => (
        <Link to={`/sweeps/${sweep.id}`} data-testid={`sweep-link-${sweep.id}`}>
          {name}
        </Link>
      ),
    },
    {
      title: t('sweeps.method'),
      dataIndex: 'method',
      render: (method: Sweep['method']) => t(`sweeps.methods.${method}`),
    },
    {
      title: t('sweeps.stateLabel'),
      dataIndex: 'state',
      render: (state: SweepState) => <SweepStateTag state={state} />,
    },
    {
      title: t('sweeps.progress'),
      key: 'progress',
      render: (_, sweep) => (
        <SweepProgress counts={sweep.counts} testId={`sweep-progress-${sweep.id}`} />
      ),
    },
    {
      title: shared === undefined ? t('sweeps.best') : t('sweeps.bestOf', { metric: shared }),
      key: 'best',
      render: (_, sweep) => {
        const { best } = sweep;
        if (best === null) return '—';
        const value = valueText(best.value);
        const text =
          shared === undefined
            ? t('sweeps.bestValueOf', { metric: sweep.metric ?? '', value, index: best.index })
            : t('sweeps.bestValue', { value, index: best.index });
        return <span data-testid={`sweep-best-${sweep.id}`}>{text}</span>;
      },
    },
    { title: t('sweeps.owner'), dataIndex: 'owner', render: (o: string | null) => o ?? '—' },
    {
      title: t('sweeps.created'),
      dataIndex: 'created_at',
      render: (at: string) => formatDateTime(at, language),
    },
  ];

  return (
    <>
      <PageHeader
        title={t('sweeps.title')}
        subtitle={t('sweeps.subtitle')}
        extra={
          <>
            <Button icon={<ReloadOutlined />} onClick={() => void sweeps.refetch()}>
              {t('common.refresh')}
            </Button>
            {canWrite && (
              <Button
                type="primary"
                icon={<PlusOutlined />}
                onClick={() => void navigate('/sweeps/new')}
              >
                {t('sweeps.submit')}
              </Button>
            )}
          </>
        }
      />
      <Card>
        <Space wrap style={{ marginBottom: 16 }}>
          <Select<SweepState>
            allowClear
            aria-label={t('sweeps.stateLabel')}
            placeholder={t('sweeps.anyState')}
            style={{ width: 160 }}
            value={filters.state}
            // Cleared, it gives undefined: the filter is left out of the query.
            onChange={(state: SweepState | undefined) => {
              setFilters(state === undefined ? {} : { state });
            }}
            options={STATES.map((s) => ({ value: s, label: t(`sweeps.state.${s}`) }))}
          />
        </Space>
        <QueryTable<Sweep>
          rowKey="id"
          data-testid="sweeps-table"
          size="middle"
          query={sweeps}
          columns={columns}
          rows={rows}
          pagination={false}
          scroll={{ x: 'max-content' }}
          locale={{
            emptyText: (
              <Empty
                description={<Typography.Text>{t('sweeps.empty')}</Typography.Text>}
                data-testid="sweeps-empty"
              />
            ),
          }}
        />
        <CursorPager pages={pages} query={sweeps} testId="sweeps-page" />
      </Card>
    </>
  );
}
