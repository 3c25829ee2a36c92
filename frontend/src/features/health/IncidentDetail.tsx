import { CheckCircleOutlined } from '@ant-design/icons';
import { Button, Descriptions, Empty, Popconfirm, Table, Timeline, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import type { Incident } from '../../lib/apiTypes';
import { formatDateTime, formatNumber } from '../../lib/format';
import { currentLanguage, type Language } from '../../lib/i18n';
import { useResolveIncident } from './nodeActions';

type IncidentJob = Incident['jobs'][number];

/** GPU-seconds as GPU-hours, the unit operators budget in. */
function gpuHours(seconds: number, language: Language): string {
  return formatNumber(seconds / 3600, language, 2);
}

/** The schema types `actions_taken` loosely (a JSON field): `[[iso time, what], ...]`. */
function actionsTaken(value: unknown): { at: string; what: string }[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry: unknown) =>
    Array.isArray(entry) && entry.length === 2
      ? [{ at: String(entry[0]), what: String(entry[1]) }]
      : [],
  );
}

/**
 * What an operator checks of an incident's self-healing, in its expanded row: the actions
 * taken, the hot spare brought in, and each affected job's resume point and lost GPU time.
 */
export function IncidentDetail({ incident }: { incident: Incident }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const actions = actionsTaken(incident.actions_taken);
  return (
    <div data-testid={`incident-detail-${incident.id}`} style={{ maxWidth: '100%' }}>
      <Descriptions size="small" column={{ xs: 1, md: 3 }}>
        <Descriptions.Item label={t('health.spareInService')}>
          {incident.spare_name ?? t('health.noSpare')}
        </Descriptions.Item>
        <Descriptions.Item label={t('health.lostGpuHours')}>
          {gpuHours(incident.lost_gpu_seconds, language)}
        </Descriptions.Item>
        <Descriptions.Item label={t('health.remediations')}>
          {incident.remediations}
        </Descriptions.Item>
      </Descriptions>
      <Typography.Title level={5}>{t('health.actionsTaken')}</Typography.Title>
      {actions.length === 0 ? (
        <Typography.Text type="secondary">—</Typography.Text>
      ) : (
        <Timeline
          items={actions.map((a, i) => ({
            key: i,
            content: (
              <>
                <Typography.Text type="secondary">{formatDateTime(a.at, language)}</Typography.Text>{' '}
                {a.what}
              </>
            ),
          }))}
        />
      )}
      <Typography.Title level={5}>{t('health.affectedJobs')}</Typography.Title>
      <Table<IncidentJob>
        rowKey={(j) => `${String(j.job)}-${String(j.attempt)}`}
        size="small"
        pagination={false}
        scroll={{ x: 'max-content' }}
        dataSource={incident.jobs}
        locale={{ emptyText: <Empty description={t('health.noAffectedJobs')} /> }}
        columns={[
          { title: t('health.job'), dataIndex: 'job', render: (id: number) => `#${String(id)}` },
          {
            title: t('health.jobOutcome'),
            dataIndex: 'outcome',
            render: (o: string) => t(`health.jobOutcome_${o}`, { defaultValue: o }),
          },
          { title: t('health.devices'), dataIndex: 'devices' },
          { title: t('health.attempt'), dataIndex: 'attempt' },
          {
            title: t('health.resumePoint'),
            key: 'resume',
            render: (_, j) =>
              j.resume_step === null ? t('health.resumeFromStart') : j.resume_from,
          },
          {
            title: t('health.lostGpuHours'),
            dataIndex: 'lost_gpu_seconds',
            render: (s: number) => gpuHours(s, language),
          },
        ]}
      />
    </div>
  );
}

/** The Resolve action of an open incident (with confirmation); nothing for a closed one. */
export function ResolveIncidentButton({ incident }: { incident: Incident }) {
  const { t } = useTranslation();
  const resolve = useResolveIncident();
  if (incident.state !== 'open') return null;
  const cordoning = incident.fault_action === 'cordon' || incident.fault_action === 'cordon_drain';
  return (
    <Popconfirm
      title={t(cordoning ? 'health.resolveConfirmCordoned' : 'health.resolveConfirm', {
        fault: incident.fault,
        node: incident.node_name,
      })}
      okText={t('health.resolve')}
      onConfirm={() => {
        resolve.mutate(incident);
      }}
    >
      <Button
        size="small"
        icon={<CheckCircleOutlined />}
        loading={resolve.isPending}
        data-testid={`resolve-${String(incident.id)}`}
      >
        {t('health.resolve')}
      </Button>
    </Popconfirm>
  );
}
