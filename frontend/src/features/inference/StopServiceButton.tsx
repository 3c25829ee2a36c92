import { StopOutlined } from '@ant-design/icons';
import { useQueryClient } from '@tanstack/react-query';
import { App, Button, Popconfirm } from 'antd';
import { useTranslation } from 'react-i18next';
import type { InferenceService } from '../../lib/apiTypes';
import { ACTIVE_STATES } from '../../lib/jobStates';
import { useJobAction } from '../jobs/api';
import { useTenant } from '../tenancy/useTenant';
import { isJobState } from './labels';

/**
 * Stops a service: a service is its inference job, so this cancels the job with the Jobs
 * pages' own call (the serializer then reports no replicas for it).
 */
export function StopServiceButton({
  tenant,
  service,
}: {
  tenant: string;
  service: InferenceService;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const client = useQueryClient();
  const cancel = useJobAction(tenant, 'cancel');
  const { mayCancel } = useTenant();
  const state = service.state;
  // Only while the job holds or waits for GPUs: an ended job has nothing to stop.
  const active = isJobState(state) && ACTIVE_STATES.includes(state);
  const allowed = mayCancel(service.owner);
  if (!active || !allowed) return null;
  return (
    <Popconfirm
      title={t('inference.stopConfirm')}
      okText={t('inference.stop')}
      cancelText={t('common.no')}
      onConfirm={() => {
        cancel.mutate(service.job, {
          onSuccess: () => {
            void message.success(t('inference.stopped', { name: service.name }));
            void client.invalidateQueries({ queryKey: ['inference', tenant] });
          },
          onError: (error) => void message.error(error.summary),
        });
      }}
    >
      <Button danger icon={<StopOutlined />} loading={cancel.isPending}>
        {t('inference.stop')}
      </Button>
    </Popconfirm>
  );
}
