import { RollbackOutlined } from '@ant-design/icons';
import { App, Button, Card, Empty, Popconfirm, Table, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import type { InferenceService, ServiceRevision } from '../../lib/apiTypes';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { ACTIVE_STATES } from '../../lib/jobStates';
import { eventMessage } from '../jobs/reasons';
import { useTenant } from '../tenancy/useTenant';
import { useRollback, useServiceRevisions } from './api';
import { isJobState, runsOtherThan, servingSettingsText } from './labels';

const STATE_COLORS: Record<ServiceRevision['state'], string> = {
  pending: 'gold',
  rolling: 'processing',
  complete: 'success',
  superseded: 'default',
  failed: 'error',
};

/**
 * The service's revisions (runtime image and model), newest first: how each rolled out, who
 * made it (none: an automatic rollback after a failed rollout) and why. An earlier revision
 * that runs something else than now (image, model, port or probes) can be rolled back to: it
 * rolls out again as a new revision.
 */
export function RevisionsCard({ tenant, service }: { tenant: string; service: InferenceService }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const language = currentLanguage();
  const { canWrite } = useTenant();
  const revisions = useServiceRevisions(tenant, service);
  const rollback = useRollback(tenant, service.id);
  const active = isJobState(service.state) && ACTIVE_STATES.includes(service.state);
  // The list shown while a new key reads is the one read for the service's previous rollout
  // line: naming the service's serving revision in it could sit beside a state from before
  // (revision 2 serving, revision 1 still complete). The tag waits for the list that matches.
  const current = !revisions.isPlaceholderData;
  const mayRollBack = (r: ServiceRevision) =>
    canWrite && active && r.number < service.revision && runsOtherThan(r, service);

  return (
    <Card title={t('inference.revisions')} style={{ marginTop: 16 }}>
      {revisions.isError ? (
        <QueryErrorResult error={revisions.error} onRetry={() => void revisions.refetch()} />
      ) : (
        <Table<ServiceRevision>
          rowKey="number"
          size="small"
          data-testid="revisions-table"
          loading={revisions.isPending}
          pagination={false}
          dataSource={revisions.data?.results ?? []}
          locale={{ emptyText: <Empty description={t('inference.noRevisions')} /> }}
          columns={[
            {
              title: t('inference.revision'),
              dataIndex: 'number',
              render: (n: number, r) => (
                <>
                  #{n}
                  {r.rollback_of !== null && (
                    <Typography.Text type="secondary" style={{ marginLeft: 6 }}>
                      {t('inference.rollbackOf', { n: r.rollback_of })}
                    </Typography.Text>
                  )}
                </>
              ),
            },
            {
              title: t('inference.runtime'),
              dataIndex: 'runtime_image',
              render: (image: string) => <code>{image}</code>,
            },
            {
              title: t('inference.model'),
              dataIndex: 'model_uri',
              render: (model: string, r) => (
                <>
                  <code>{model}</code>
                  <br />
                  <Typography.Text type="secondary" data-testid="revision-settings">
                    {servingSettingsText(t, r.settings)}
                  </Typography.Text>
                </>
              ),
            },
            {
              title: t('jobs.state'),
              key: 'state',
              render: (_, r) => (
                <>
                  <Tag color={STATE_COLORS[r.state]} data-testid="revision-state">
                    {t(`inference.revisionState.${r.state}`, { defaultValue: r.state })}
                  </Tag>
                  {active && current && r.number === service.serving_revision && (
                    <Tag color="green" data-testid="revision-serving">
                      {t('inference.serving')}
                    </Tag>
                  )}
                </>
              ),
            },
            {
              title: t('inference.createdBy'),
              dataIndex: 'created_by',
              render: (by: string | null) =>
                by ?? (
                  <Typography.Text type="secondary">{t('inference.automatic')}</Typography.Text>
                ),
            },
            {
              title: t('inference.at'),
              dataIndex: 'created_at',
              render: (at: string) => formatDateTime(at, language),
            },
            {
              title: t('inference.message'),
              key: 'message',
              // The platform's own words in the reader's language; a cluster's as it wrote them.
              render: (_, r) => eventMessage(t, r) || '—',
            },
            {
              title: '',
              key: 'actions',
              align: 'right',
              render: (_, r) =>
                mayRollBack(r) && (
                  <Popconfirm
                    title={t('inference.rollbackConfirm', { n: r.number })}
                    okText={t('inference.rollback')}
                    cancelText={t('common.no')}
                    onConfirm={() => {
                      rollback.mutate(r.number, {
                        onSuccess: (updated) => {
                          void message.success(
                            t('inference.rolledBack', { of: r.number, revision: updated.revision }),
                          );
                        },
                        onError: (error) => void message.error(error.summary),
                      });
                    }}
                  >
                    <Button
                      size="small"
                      icon={<RollbackOutlined />}
                      loading={rollback.isPending && rollback.variables === r.number}
                      disabled={rollback.isPending && rollback.variables !== r.number}
                    >
                      {t('inference.rollback')}
                    </Button>
                  </Popconfirm>
                ),
            },
          ]}
        />
      )}
    </Card>
  );
}
