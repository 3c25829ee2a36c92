import { Descriptions, Form, Input, InputNumber, Select } from 'antd';
import { useTranslation } from 'react-i18next';
import { formatDuration } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import type { DefaultPolicy } from '../../lib/apiTypes';

// The policy's durations, in the order the form and the summary show them.
const DURATIONS = ['training_idle_s', 'notebook_idle_s', 'grace_s', 'extension_s'] as const;

/** The policy's numeric fields (a form may say something beside each). */
export type PolicyNumber = 'util_threshold_pct' | (typeof DURATIONS)[number] | 'max_extensions';

/** What the sweep applies, field by field; `webhook` only where the policy has one. */
export function PolicySummary({
  policy,
  webhook,
  testId,
}: {
  policy: DefaultPolicy & { webhook_url?: string };
  webhook: boolean;
  testId: string;
}) {
  const { t } = useTranslation();
  // In the reader's language: "2小时30分钟", not the compact English "2h 30m".
  const duration = (s: number) => formatDuration(s, currentLanguage());
  const runtime = (s: number | null | undefined) =>
    s === null || s === undefined ? t('idle.noCap') : duration(s);
  return (
    <Descriptions size="small" column={{ xs: 1, md: 2, xl: 3 }} data-testid={testId}>
      <Descriptions.Item label={t('idle.util_threshold_pct')}>
        {`${policy.util_threshold_pct ?? '—'} %`}
      </Descriptions.Item>
      {DURATIONS.map((key) => (
        <Descriptions.Item key={key} label={t(`idle.${key}`)}>
          {duration(policy[key] ?? 0)}
        </Descriptions.Item>
      ))}
      <Descriptions.Item label={t('idle.max_extensions')}>
        {policy.max_extensions}
      </Descriptions.Item>
      <Descriptions.Item label={t('idle.queue_action')}>
        {t(`idle.queue_${policy.queue_action ?? 'expire'}`)}
      </Descriptions.Item>
      <Descriptions.Item label={t('idle.max_runtime_s')}>
        {runtime(policy.max_runtime_s)}
      </Descriptions.Item>
      {webhook && (
        <Descriptions.Item label={t('idle.webhook_url')}>
          {(policy.webhook_url ?? '') === '' ? '—' : policy.webhook_url}
        </Descriptions.Item>
      )}
    </Descriptions>
  );
}

/**
 * The policy's form fields, for a `Form` whose values are a policy. `hint` says something
 * beside a numeric field (a tenant's form: the platform default it may not loosen).
 */
export function PolicyFormItems({
  hint,
  webhook,
}: {
  hint?: (key: PolicyNumber) => string | undefined;
  webhook: boolean;
}) {
  const { t } = useTranslation();
  return (
    <>
      <Form.Item
        name="util_threshold_pct"
        label={t('idle.util_threshold_pct')}
        extra={hint?.('util_threshold_pct')}
        rules={[{ required: true }]}
      >
        <InputNumber min={0.5} max={100} step={1} suffix="%" style={{ width: '100%' }} />
      </Form.Item>
      {DURATIONS.map((key) => (
        <Form.Item
          key={key}
          name={key}
          label={t(`idle.${key}`)}
          extra={hint?.(key)}
          rules={[{ required: true }]}
        >
          <InputNumber min={60} step={60} suffix={t('idle.seconds')} style={{ width: '100%' }} />
        </Form.Item>
      ))}
      <Form.Item
        name="max_extensions"
        label={t('idle.max_extensions')}
        extra={hint?.('max_extensions')}
        rules={[{ required: true }]}
      >
        <InputNumber min={0} max={20} style={{ width: '100%' }} />
      </Form.Item>
      <Form.Item name="queue_action" label={t('idle.queue_action')}>
        <Select
          options={(['expire', 'escalate'] as const).map((v) => ({
            value: v,
            label: t(`idle.queue_${v}`),
          }))}
        />
      </Form.Item>
      <Form.Item
        name="max_runtime_s"
        label={t('idle.max_runtime_s')}
        extra={t('idle.maxRuntimeHint')}
      >
        <InputNumber min={60} step={3600} suffix={t('idle.seconds')} style={{ width: '100%' }} />
      </Form.Item>
      {webhook && (
        <Form.Item
          name="webhook_url"
          label={t('idle.webhook_url')}
          rules={[{ type: 'url', message: t('idle.badUrl') }]}
        >
          <Input placeholder="https://" />
        </Form.Item>
      )}
    </>
  );
}
