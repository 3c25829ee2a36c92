import { VerticalAlignBottomOutlined } from '@ant-design/icons';
import { Button, Empty, Select, Skeleton, Space, Tag, Typography } from 'antd';
import { useLayoutEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { TAIL_CHOICES, useJobLogs } from './logs';

const ALL = '';
// Within this many pixels of the bottom counts as "at the bottom": follow new lines.
const STICKY_PX = 24;

/** The tail of a job's logs: monospace, polled while the job runs, follows new lines unless
 * the reader scrolled up to read something. */
export function JobLogsPanel({
  tenant,
  jobId,
  live,
}: {
  tenant: string;
  jobId: number;
  live: boolean;
}) {
  const { t } = useTranslation();
  const [tail, setTail] = useState<number>(TAIL_CHOICES[1]);
  const [replica, setReplica] = useState(ALL);
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLDivElement>(null);
  const logs = useJobLogs(tenant, jobId, tail, live);

  const lines = logs.data?.lines ?? [];
  const replicas = [...new Set(lines.map((l) => l.replica))].sort();
  const shown = replica === ALL ? lines : lines.filter((l) => l.replica === replica);
  const lastTs = shown.at(-1)?.ts;

  useLayoutEffect(() => {
    const element = box.current;
    if (element !== null && follow) element.scrollTop = element.scrollHeight;
  }, [follow, shown.length, lastTs]);

  const toBottom = () => {
    setFollow(true);
    const element = box.current;
    if (element !== null) element.scrollTop = element.scrollHeight;
  };

  return (
    <div data-testid="job-logs">
      <Space wrap style={{ marginBottom: 8 }}>
        <Select
          aria-label={t('logs.replica')}
          style={{ width: 200 }}
          value={replica}
          onChange={(value: string) => {
            setReplica(value);
          }}
          options={[
            { value: ALL, label: t('logs.allReplicas') },
            ...replicas.map((r) => ({ value: r, label: r })),
          ]}
        />
        <Select
          aria-label={t('logs.tail')}
          style={{ width: 150 }}
          value={tail}
          onChange={(value: number) => {
            setTail(value);
          }}
          options={TAIL_CHOICES.map((n) => ({
            value: n,
            label: t('logs.lastLines', { count: n }),
          }))}
        />
        {logs.data && <Tag data-testid="logs-source">{t(`logs.source.${logs.data.source}`)}</Tag>}
        {live && <Tag color="processing">{t('logs.live')}</Tag>}
        {!follow && (
          <Button size="small" icon={<VerticalAlignBottomOutlined />} onClick={toBottom}>
            {t('logs.jumpToLatest')}
          </Button>
        )}
      </Space>
      {logs.data?.truncated && (
        <Typography.Paragraph
          type="secondary"
          style={{ marginBottom: 4 }}
          data-testid="logs-truncated"
        >
          {t('logs.truncated', { count: tail })}
        </Typography.Paragraph>
      )}
      {logs.isPending ? (
        <Skeleton active />
      ) : logs.isError && logs.data === undefined ? (
        <QueryErrorResult error={logs.error} onRetry={() => void logs.refetch()} />
      ) : shown.length === 0 ? (
        <Empty description={t('logs.empty')} data-testid="logs-empty" />
      ) : (
        <div
          ref={box}
          role="log"
          aria-label={t('logs.title')}
          aria-live="off"
          tabIndex={0}
          data-testid="log-lines"
          onScroll={(event) => {
            const el = event.currentTarget;
            setFollow(el.scrollHeight - el.scrollTop - el.clientHeight <= STICKY_PX);
          }}
          style={{
            fontFamily:
              'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace',
            fontSize: 12,
            lineHeight: 1.5,
            background: '#0f172a',
            color: '#e2e8f0',
            borderRadius: 6,
            padding: '8px 12px',
            height: 360,
            overflow: 'auto',
            whiteSpace: 'pre-wrap',
            wordBreak: 'break-all',
          }}
        >
          {shown.map((line, i) => (
            <div key={`${line.attempt}-${line.ts}-${line.replica}-${i}`} data-testid="log-line">
              <span style={{ color: '#64748b' }}>
                {line.ts.replace('T', ' ').replace(/\.\d+/, '').replace('Z', '')}
              </span>{' '}
              <span style={{ color: '#7dd3fc' }}>[{line.replica}]</span> {line.text}
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
