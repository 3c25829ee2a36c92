import { SaveOutlined } from '@ant-design/icons';
import { useQueryClient } from '@tanstack/react-query';
import { App, Button, Popconfirm, Space, Tag, Tooltip } from 'antd';
import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import { runKeys } from '../experiments/api';
import { useCheckpointRequest, useRequestCheckpoint } from './api';

/**
 * The job's checkpoint request, on its Checkpoints card: whether one is pending or which
 * checkpoint served the last one, and (for members on a running job) a button to ask the job
 * to save one now, e.g. before stopping it by hand. The job's code hears of it through the
 * SDK (`zhisuan.checkpoint_requested()`).
 */
export function CheckpointRequestControl({
  tenant,
  jobId,
  runId,
  running,
  canWrite,
}: {
  tenant: string;
  jobId: number;
  /** The job's run, whose checkpoint list is refreshed when a new checkpoint shows here. */
  runId: number;
  running: boolean;
  canWrite: boolean;
}) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const { message } = App.useApp();
  const state = useCheckpointRequest(tenant, jobId, running);
  const ask = useRequestCheckpoint(tenant, jobId);
  const data = state.data;
  const client = useQueryClient();
  const newest = data?.newest_step;
  const seen = useRef(newest);
  useEffect(() => {
    // A checkpoint newer than the card's list (often the requested one): show it there too.
    if (seen.current !== undefined && newest !== seen.current) {
      void client.invalidateQueries({ queryKey: runKeys.checkpoints(tenant, runId) });
    }
    seen.current = newest;
  }, [client, newest, runId, tenant]);
  let status = null;
  if (data?.requested_at != null) {
    const at = formatDateTime(data.requested_at, language);
    status = data.pending ? (
      <Tooltip title={data.reason}>
        <Tag color="processing" data-testid="checkpoint-request">
          {t('checkpointRequest.pending', { time: at })}
        </Tag>
      </Tooltip>
    ) : (
      <Tag color="green" data-testid="checkpoint-request">
        {t('checkpointRequest.served', { time: at, step: data.served_step ?? '?' })}
      </Tag>
    );
  }
  return (
    <Space>
      {status}
      {canWrite && running && (
        <Popconfirm
          title={t('checkpointRequest.confirm')}
          okText={t('checkpointRequest.ask')}
          cancelText={t('common.no')}
          onConfirm={() => {
            ask.mutate(undefined, {
              onSuccess: () => void message.success(t('checkpointRequest.asked')),
              onError: (error) => void message.error(error.summary),
            });
          }}
        >
          <Button
            size="small"
            icon={<SaveOutlined />}
            loading={ask.isPending}
            disabled={data?.pending === true}
            data-testid="request-checkpoint"
          >
            {t('checkpointRequest.ask')}
          </Button>
        </Popconfirm>
      )}
    </Space>
  );
}
