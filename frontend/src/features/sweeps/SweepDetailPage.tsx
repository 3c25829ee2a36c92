import {
  ArrowLeftOutlined,
  DownloadOutlined,
  LineChartOutlined,
  StopOutlined,
} from '@ant-design/icons';
import {
  Alert,
  App,
  Button,
  Card,
  Col,
  Collapse,
  Descriptions,
  Empty,
  Popconfirm,
  Row,
  Skeleton,
  Statistic,
  Typography,
} from 'antd';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import type { SweepDetail } from '../../lib/apiTypes';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { useTenant } from '../tenancy/useTenant';
import { useCancelSweep, useSweep } from './api';
import {
  COMPARE_MOST,
  compareRunIds,
  COUNT_ORDER,
  earlyStopText,
  metricText,
  totalOf,
} from './sweepData';
import {
  DEFAULT_REDUCTION_FACTOR,
  DEFAULT_STARTUP_TRIALS,
  DEFAULT_STOP_AFTER_STEP,
  DEFAULT_STOP_MIN_TRIALS,
} from './sweepFile';
import { SweepResults } from './SweepResults';
import { SweepStateTag } from './SweepStateTag';

const MONOSPACE = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';

export function SweepDetailPage({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const params = useParams();
  const id = Number(params.id);
  if (!Number.isInteger(id) || id <= 0) {
    return <Empty description={t('sweeps.notFound')} />;
  }
  return <SweepDetailView tenant={tenant} id={id} />;
}

function SweepDetailView({ tenant, id }: { tenant: string; id: number }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { message } = App.useApp();
  const sweep = useSweep(tenant, id);
  const cancel = useCancelSweep(tenant);
  // The sweep's owner and tenant (or platform) admins cancel it; the server says 403 to others.
  const { mayCancel } = useTenant();

  if (sweep.isPending) return <Skeleton active paragraph={{ rows: 8 }} />;
  if (sweep.isError) {
    return <QueryErrorResult error={sweep.error} onRetry={() => void sweep.refetch()} />;
  }
  const data: SweepDetail = sweep.data;
  const runs = compareRunIds(data.outcomes);

  return (
    <>
      <PageHeader
        title={t('sweeps.detailTitle', { name: data.name, id: data.id })}
        subtitle={t('sweeps.subtitle')}
        extra={
          <>
            <Button icon={<ArrowLeftOutlined />} onClick={() => void navigate('/sweeps')}>
              {t('sweeps.back')}
            </Button>
            {runs.length > 0 && (
              // The compare page's deep link (?runs=), best first: its colour order.
              <Link
                to={`/experiments?runs=${runs.slice(0, COMPARE_MOST).join(',')}`}
                data-testid="sweep-compare"
                style={{ lineHeight: '32px' }}
              >
                <LineChartOutlined />{' '}
                {runs.length > COMPARE_MOST
                  ? t('sweeps.compareBest', { count: COMPARE_MOST })
                  : t('sweeps.compare')}
              </Link>
            )}
            <Button
              icon={<DownloadOutlined />}
              href={`/api/v1/tenants/${tenant}/sweeps/${data.id}/csv/`}
              download
              data-testid="sweep-export"
            >
              {t('sweeps.export')}
            </Button>
            {data.state === 'running' && mayCancel(data.owner) && (
              <Popconfirm
                title={t('sweeps.cancelConfirm')}
                okText={t('sweeps.cancel')}
                cancelText={t('common.no')}
                onConfirm={() => {
                  cancel.mutate(data.id, {
                    onSuccess: () => void message.success(t('sweeps.cancelDone')),
                    onError: (error) => void message.error(error.summary),
                  });
                }}
              >
                <Button danger icon={<StopOutlined />} loading={cancel.isPending}>
                  {t('sweeps.cancel')}
                </Button>
              </Popconfirm>
            )}
          </>
        }
      />
      {data.state === 'stopped' && (
        <Alert
          type="warning"
          showIcon
          style={{ marginBottom: 16 }}
          title={t('sweeps.stopped')}
          description={data.note === '' ? undefined : data.note}
          data-testid="sweep-note"
        />
      )}
      <Row gutter={[16, 16]}>
        <Col xs={24} xl={14}>
          <SweepSummary sweep={data} />
        </Col>
        <Col xs={24} xl={10}>
          <Card title={t('sweeps.trials')} style={{ height: '100%' }}>
            <Row gutter={[16, 16]}>
              {COUNT_ORDER.map((key) => (
                <Col key={key} xs={12} sm={8}>
                  <div data-testid={`sweep-count-${key}`}>
                    <Statistic title={t(`sweeps.countLabel.${key}`)} value={data.counts[key]} />
                  </div>
                </Col>
              ))}
            </Row>
          </Card>
        </Col>
      </Row>
      <SweepResults sweep={data} />
      <Collapse
        style={{ marginTop: 16 }}
        data-testid="sweep-template"
        items={[
          {
            key: 'template',
            label: t('sweeps.template'),
            children: (
              <>
                <Typography.Paragraph type="secondary">
                  {t('sweeps.templateHint', { placeholder: '{{name}}' })}
                </Typography.Paragraph>
                <pre style={{ fontFamily: MONOSPACE, fontSize: 13, margin: 0, overflowX: 'auto' }}>
                  {JSON.stringify(data.template, null, 2)}
                </pre>
              </>
            ),
          },
        ]}
      />
    </>
  );
}

function SweepSummary({ sweep }: { sweep: SweepDetail }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const metric = sweep.metric ?? '';
  return (
    <Card title={t('sweeps.summary')} style={{ height: '100%' }}>
      <Descriptions column={{ xs: 1, md: 2 }} size="small" data-testid="sweep-summary">
        <Descriptions.Item label={t('sweeps.stateLabel')}>
          <SweepStateTag state={sweep.state} />
        </Descriptions.Item>
        <Descriptions.Item label={t('sweeps.method')}>
          <span data-testid="sweep-method">
            {sweep.method === 'tpe'
              ? t('sweeps.tpeMethod', {
                  count: sweep.startup_trials ?? DEFAULT_STARTUP_TRIALS,
                })
              : t(`sweeps.methods.${sweep.method}`)}
          </span>
        </Descriptions.Item>
        <Descriptions.Item label={t('sweeps.trials')}>{totalOf(sweep.counts)}</Descriptions.Item>
        <Descriptions.Item label={t('sweeps.seed')}>{sweep.seed ?? '—'}</Descriptions.Item>
        <Descriptions.Item label={t('sweeps.parallel')}>
          {t('sweeps.parallelValue', { count: sweep.parallel })}
        </Descriptions.Item>
        <Descriptions.Item label={t('sweeps.metric')}>
          <span data-testid="sweep-metric">{metricText(t, metric, sweep.goal, sweep.rank_by)}</span>
        </Descriptions.Item>
        <Descriptions.Item label={t('sweeps.earlyStop')}>
          <span data-testid="sweep-early-stop">
            {earlyStopText(t, {
              earlyStop: sweep.early_stop,
              stopAfterStep: sweep.stop_after_step ?? DEFAULT_STOP_AFTER_STEP,
              stopMinTrials: sweep.stop_min_trials ?? DEFAULT_STOP_MIN_TRIALS,
              reductionFactor: sweep.reduction_factor ?? DEFAULT_REDUCTION_FACTOR,
              brackets: sweep.brackets ?? 1,
            })}
          </span>
        </Descriptions.Item>
        <Descriptions.Item label={t('sweeps.owner')}>{sweep.owner ?? '—'}</Descriptions.Item>
        <Descriptions.Item label={t('sweeps.created')}>
          {formatDateTime(sweep.created_at, language)}
        </Descriptions.Item>
        <Descriptions.Item label={t('sweeps.finished')}>
          {formatDateTime(sweep.finished_at, language)}
        </Descriptions.Item>
      </Descriptions>
    </Card>
  );
}
