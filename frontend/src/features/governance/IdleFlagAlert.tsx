import { Alert, App, Button, Form, Input, Space } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormModal } from '../../components/FormModal';
import { formatDateTime, formatDuration } from '../../lib/format';
import { applyServerErrors } from '../../lib/formErrors';
import { currentLanguage } from '../../lib/i18n';
import type { IdleFlag } from '../../lib/apiTypes';
import { useFlagAction, useJobIdleFlag, useTenantPolicy } from './api';

interface Props {
  tenant: string;
  jobId: number;
  /** The job holds GPUs now: the flag may still change. */
  live: boolean;
  canWrite: boolean;
}

/**
 * The idle-GPU warning on a job's page, with the two answers the owner has before the stop:
 * keep it running a while longer (a few times at most, by the tenant's policy), or exempt it
 * for good with a reason. An exempt job says so; a cleared or stopped flag shows nothing
 * here (the job's state and timeline tell the stop).
 */
export function IdleFlagAlert({ tenant, jobId, live, canWrite }: Props) {
  const { t } = useTranslation();
  const f = useJobIdleFlag(tenant, jobId, live).data;
  if (!f) return null;
  if (f.state === 'exempt') {
    return (
      <Alert
        type="info"
        showIcon
        style={{ marginBottom: 16 }}
        data-testid="idle-flag"
        title={t('governance.exemptTitle')}
        description={t('governance.exemptBody', {
          reason: f.exempt_reason,
          by: f.exempted_by || '—',
        })}
      />
    );
  }
  if (f.state !== 'warned' && f.state !== 'extended') return null;
  return <IdleWarning tenant={tenant} jobId={jobId} flag={f} canWrite={canWrite} />;
}

/**
 * For a training job or notebook not ended, with no warning pending and not exempt: its owner
 * or a tenant admin may exempt it from idle stops before any warning (a debugging session
 * known to sit idle). Nothing otherwise.
 */
export function ExemptJobButton({
  tenant,
  jobId,
  live,
}: {
  tenant: string;
  jobId: number;
  live: boolean;
}) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const flag = useJobIdleFlag(tenant, jobId, live);
  if (flag.isPending || flag.isError) return null;
  const state = flag.data?.state;
  if (state !== undefined && state !== 'cleared') return null;
  return (
    <>
      <Button
        data-testid="exempt-job"
        onClick={() => {
          setOpen(true);
        }}
      >
        {t('governance.exemptJob')}
      </Button>
      {open && (
        <ExemptModal
          tenant={tenant}
          jobId={jobId}
          flag={undefined}
          onClose={() => {
            setOpen(false);
          }}
        />
      )}
    </>
  );
}

/** An active warning: the policy (threshold, extensions) is read only for one of these. */
function IdleWarning({
  tenant,
  jobId,
  flag: f,
  canWrite,
}: {
  tenant: string;
  jobId: number;
  flag: IdleFlag;
  canWrite: boolean;
}) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const policy = useTenantPolicy(tenant);
  const [exempting, setExempting] = useState(false);
  const effective = policy.data?.effective;
  const left =
    effective?.max_extensions === undefined
      ? undefined
      : Math.max(0, effective.max_extensions - f.extensions_used);
  return (
    <>
      <Alert
        type="warning"
        showIcon
        style={{ marginBottom: 16 }}
        data-testid="idle-flag"
        title={t('governance.idleTitle', { stop: formatDateTime(f.stop_at, language) })}
        description={t('governance.idleBody', {
          since: formatDateTime(f.idle_since, language),
          peak: f.peak_util_pct === null ? '—' : f.peak_util_pct.toFixed(1),
          threshold: effective?.util_threshold_pct ?? '—',
        })}
        action={
          canWrite && (
            <Space orientation="vertical">
              <KeepRunningButton
                tenant={tenant}
                jobId={jobId}
                flag={f}
                left={left}
                extension={effective?.extension_s}
              />
              <Button
                size="small"
                onClick={() => {
                  setExempting(true);
                }}
              >
                {t('governance.exempt')}
              </Button>
            </Space>
          )
        }
      />
      {exempting && (
        <ExemptModal
          tenant={tenant}
          jobId={jobId}
          flag={f}
          onClose={() => {
            setExempting(false);
          }}
        />
      )}
    </>
  );
}

function KeepRunningButton({
  tenant,
  jobId,
  flag,
  left,
  extension,
}: {
  tenant: string;
  jobId: number;
  flag: IdleFlag;
  left: number | undefined;
  extension: number | undefined;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const act = useFlagAction(tenant, jobId);
  return (
    <Button
      size="small"
      type="primary"
      disabled={left === 0}
      loading={act.isPending}
      data-testid="keep-running"
      title={left === 0 ? t('governance.noExtensionsLeft') : undefined}
      onClick={() => {
        act.mutate(
          { flag: flag.id, action: 'keep-running' },
          {
            onSuccess: (updated) =>
              void message.success(
                t('governance.keptRunning', {
                  stop: formatDateTime(updated.stop_at, currentLanguage()),
                }),
              ),
            onError: (error) => void message.error(error.summary),
          },
        );
      }}
    >
      {left === undefined
        ? t('governance.keepRunning')
        : t('governance.keepRunningFor', {
            duration: extension === undefined ? '—' : formatDuration(extension, currentLanguage()),
            count: left,
          })}
    </Button>
  );
}

function ExemptModal({
  tenant,
  jobId,
  flag,
  onClose,
}: {
  tenant: string;
  jobId: number;
  /** Undefined: no warning yet (exempted before any). */
  flag: IdleFlag | undefined;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<{ reason: string }>();
  const act = useFlagAction(tenant, jobId);
  return (
    <FormModal
      title={t('governance.exemptTitleModal')}
      okText={t('governance.exempt')}
      form={form}
      pending={act.isPending}
      onClose={onClose}
    >
      <Form
        form={form}
        layout="vertical"
        onFinish={({ reason }) => {
          act.mutate(
            { flag: flag?.id, action: 'exempt', reason },
            {
              onSuccess: () => {
                void message.success(t('governance.exempted'));
                onClose();
              },
              onError: (error) => {
                const { unmatched } = applyServerErrors(form, error, [['reason']]);
                if (unmatched.length > 0) void message.error(unmatched.join(' '));
              },
            },
          );
        }}
      >
        <Form.Item
          name="reason"
          label={t('governance.reason')}
          extra={t('governance.reasonHint')}
          rules={[
            { required: true, message: t('governance.reasonRequired') },
            { min: 3, message: t('governance.reasonRequired') },
            { max: 300 },
          ]}
        >
          <Input.TextArea rows={3} maxLength={300} />
        </Form.Item>
      </Form>
    </FormModal>
  );
}
