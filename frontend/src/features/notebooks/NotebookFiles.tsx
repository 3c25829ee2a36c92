import { DeleteOutlined, RedoOutlined } from '@ant-design/icons';
import { App, Button, Popconfirm, Tooltip } from 'antd';
import { useTranslation } from 'react-i18next';
import type { Job } from '../../lib/apiTypes';
import { useJobAction } from '../jobs/api';

/** Restart (a new notebook with the same files) and Delete files, for an ended notebook that
 * keeps its files. For its owner and tenant admins: the server says 403 to others. */
export function NotebookFileActions({
  tenant,
  job,
  size,
  onRestarted,
}: {
  tenant: string;
  job: Job;
  size?: 'small';
  onRestarted?: (restarted: Job) => void;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const restart = useJobAction(tenant, 'restart');
  const deleteFiles = useJobAction(tenant, 'delete-home');
  return (
    <>
      <Tooltip title={t('notebooks.restartHint')}>
        <Button
          size={size}
          icon={<RedoOutlined />}
          loading={restart.isPending}
          onClick={() => {
            restart.mutate(job.id, {
              onSuccess: (restarted) => {
                void message.success(t('notebooks.restarted', { id: restarted.id }));
                onRestarted?.(restarted);
              },
              onError: (e) => void message.error(e.summary),
            });
          }}
        >
          {t('notebooks.restart')}
        </Button>
      </Tooltip>
      <Popconfirm
        title={t('notebooks.deleteFilesConfirm', { name: job.name })}
        description={t('notebooks.deleteFilesBody')}
        okText={t('notebooks.deleteFiles')}
        okButtonProps={{ danger: true }}
        cancelText={t('common.no')}
        onConfirm={() => {
          deleteFiles.mutate(job.id, {
            onSuccess: () => void message.success(t('notebooks.deletedFiles', { name: job.name })),
            onError: (e) => void message.error(e.summary),
          });
        }}
      >
        <Button size={size} danger icon={<DeleteOutlined />} loading={deleteFiles.isPending}>
          {t('notebooks.deleteFiles')}
        </Button>
      </Popconfirm>
    </>
  );
}
