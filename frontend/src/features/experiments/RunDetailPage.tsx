import { ArrowLeftOutlined } from '@ant-design/icons';
import { Button, Card, Descriptions, Empty, Skeleton, Space, Tag, Tooltip } from 'antd';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { useRun } from './api';
import { CheckpointsTable, RunCurves, RunKpiRow, RunStateTag } from './RunPanels';
import { flattenConfig, formatParam } from './runData';

export function RunDetailPage({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const id = Number(useParams().id);
  if (!Number.isInteger(id) || id <= 0) return <Empty description={t('experiments.notFound')} />;
  return <RunDetail tenant={tenant} id={id} />;
}

function RunDetail({ tenant, id }: { tenant: string; id: number }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const language = currentLanguage();
  const run = useRun(tenant, id);
  if (run.isPending) return <Skeleton active paragraph={{ rows: 8 }} />;
  if (run.isError) return <QueryErrorResult error={run.error} onRetry={() => void run.refetch()} />;
  const data = run.data;
  const live = data.state === 'running';
  const params = Object.entries(flattenConfig(data.config));
  return (
    <>
      <PageHeader
        title={t('experiments.runTitle', { name: data.name, id: data.id })}
        subtitle={t('experiments.runSubtitle')}
        extra={
          <Button icon={<ArrowLeftOutlined />} onClick={() => void navigate('/experiments')}>
            {t('experiments.back')}
          </Button>
        }
      />
      <Card style={{ marginBottom: 16 }}>
        <Descriptions size="small" column={{ xs: 1, md: 3 }} data-testid="run-summary">
          <Descriptions.Item label={t('runs.stateLabel')}>
            <RunStateTag state={data.state} />
            {data.simulated && (
              <Tooltip title={t('runs.simulatedHint')}>
                <Tag color="purple" data-testid="run-simulated">
                  {t('runs.simulated')}
                </Tag>
              </Tooltip>
            )}
          </Descriptions.Item>
          <Descriptions.Item label={t('runs.job')}>
            {data.job === null ? '—' : <Link to={`/jobs/${data.job}`}>#{data.job}</Link>}
          </Descriptions.Item>
          <Descriptions.Item label={t('runs.owner')}>{data.owner ?? '—'}</Descriptions.Item>
          <Descriptions.Item label={t('runs.created')}>
            {formatDateTime(data.created_at, language)}
          </Descriptions.Item>
          <Descriptions.Item label={t('runs.tags')}>
            {(data.tags ?? []).length === 0 ? (
              '—'
            ) : (
              <Space size={4} wrap>
                {(data.tags ?? []).map((tag) => (
                  <Tag key={tag}>{tag}</Tag>
                ))}
              </Space>
            )}
          </Descriptions.Item>
        </Descriptions>
      </Card>
      <RunKpiRow run={data} />
      <Card title={t('runs.curves')} style={{ marginBottom: 16 }}>
        <RunCurves tenant={tenant} run={data} live={live} />
      </Card>
      <Card title={t('experiments.hyperparameters')} style={{ marginBottom: 16 }}>
        {params.length === 0 ? (
          <Empty description={t('experiments.noParams')} />
        ) : (
          <Descriptions
            size="small"
            bordered
            column={{ xs: 1, md: 2 }}
            data-testid="run-config"
            // Keys and values (paths) without spaces break anywhere, or a phone scrolls sideways;
            // a value keeps room for a few characters beside a long key.
            styles={{
              label: { overflowWrap: 'anywhere' },
              content: { overflowWrap: 'anywhere', minWidth: 96 },
            }}
          >
            {params.map(([key, value]) => (
              <Descriptions.Item key={key} label={key}>
                {formatParam(value)}
              </Descriptions.Item>
            ))}
          </Descriptions>
        )}
      </Card>
      <Card title={t('runs.checkpoints')}>
        <CheckpointsTable tenant={tenant} runId={data.id} live={live} />
      </Card>
    </>
  );
}
