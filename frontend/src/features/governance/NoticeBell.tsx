import { BellOutlined } from '@ant-design/icons';
import { Badge, Button, Empty, List, Popover, Skeleton, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { formatDateTime } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import type { Notice } from '../../lib/apiTypes';
import { noteText, sentencesText } from '../jobs/schedulerText';
import { useMarkRead, useNotices, useUnreadCount } from './api';

/**
 * The header's inbox of governance notices (idle GPUs, queue and runtime limits): the count
 * of unread ones, and the newest ten on click. Opening a notice marks it read and goes to
 * its job, where the answers (keep running, exempt) are.
 */
export function NoticeBell({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const unread = useUnreadCount(tenant);
  const count = unread.data?.unread ?? 0;
  return (
    <Popover
      trigger="click"
      placement="bottomRight"
      open={open}
      onOpenChange={setOpen}
      title={t('governance.inbox')}
      content={
        <Inbox
          tenant={tenant}
          close={() => {
            setOpen(false);
          }}
          unread={count}
        />
      }
    >
      <Badge count={count} size="small" data-testid="notice-count">
        <Button
          type="text"
          icon={<BellOutlined />}
          aria-label={t('governance.inboxLabel', { count })}
          data-testid="notice-bell"
        />
      </Badge>
    </Popover>
  );
}

function Inbox({ tenant, close, unread }: { tenant: string; close: () => void; unread: number }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const navigate = useNavigate();
  const notices = useNotices(tenant);
  const mark = useMarkRead(tenant);
  if (notices.isPending) return <Skeleton active style={{ width: 360 }} />;
  if (notices.isError)
    return <QueryErrorResult error={notices.error} onRetry={() => void notices.refetch()} />;
  const open = (notice: Notice) => {
    if (notice.read_at === null) mark.mutate(notice.id);
    close();
    if (notice.job !== null) void navigate(`/jobs/${notice.job}`);
  };
  return (
    <div style={{ width: 380 }} data-testid="notice-inbox">
      <List<Notice>
        size="small"
        dataSource={notices.data.results}
        locale={{ emptyText: <Empty description={t('governance.noNotices')} /> }}
        renderItem={(n) => {
          // Said in the reader's language from the notice's notes; the English as stored
          // for a notice written before notes, or one this build cannot say whole.
          const title = n.detail ? noteText(t, language, n.detail.title, n.title) : n.title;
          const body = n.detail ? sentencesText(t, language, n.detail.body, n.body) : n.body;
          return (
            <List.Item
              key={n.id}
              data-testid="notice"
              data-unread={n.read_at === null}
              style={{ cursor: 'pointer' }}
              onClick={() => {
                open(n);
              }}
            >
              <List.Item.Meta
                title={
                  <Typography.Text strong={n.read_at === null}>
                    {n.read_at === null && <Badge status="processing" />} {title}
                  </Typography.Text>
                }
                description={
                  <>
                    <div data-testid="notice-body">{body}</div>
                    <Typography.Text type="secondary">
                      {formatDateTime(n.created_at, language)}
                    </Typography.Text>
                  </>
                }
              />
            </List.Item>
          );
        }}
      />
      {unread > 0 && (
        <Button
          block
          size="small"
          style={{ marginTop: 8 }}
          loading={mark.isPending}
          onClick={() => {
            mark.mutate('all');
          }}
          data-testid="notices-read-all"
        >
          {t('governance.readAll')}
        </Button>
      )}
    </div>
  );
}
