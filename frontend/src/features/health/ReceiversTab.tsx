import { App, Form, Input, Select, Switch, Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import { FormModal } from '../../components/FormModal';
import type { AlertReceiver } from '../../lib/apiTypes';
import { applyServerErrors } from '../../lib/formErrors';
import {
  useDeleteReceiver,
  useReceivers,
  useSaveReceiver,
  type ReceiverValues,
} from './consoleApi';
import { CatalogueTab } from './CatalogueTab';
import { SEVERITIES, SEVERITY_COLOR } from './healthStyle';

const KINDS = ['webhook', 'email'] as const satisfies AlertReceiver['kind'][];

/**
 * Health > Alert receivers: where alerts go besides the in-app inbox. A webhook gets a JSON
 * POST, an address an email; each receives the alerts at or above its severity, once per
 * alert (a repeat of an open alert only bumps its count).
 */
export function ReceiversTab() {
  const { t } = useTranslation();
  const receivers = useReceivers();
  const save = useSaveReceiver();
  const remove = useDeleteReceiver();
  return (
    <CatalogueTab
      ns="healthReceivers"
      testId="receivers-table"
      query={receivers}
      rowTexts={(r) => ({
        enabledLabel: t('healthReceivers.enabledLabel', { name: r.name }),
        edit: t('healthReceivers.edit', { name: r.name }),
        deleteLabel: t('healthReceivers.deleteLabel', { name: r.name }),
        deleteConfirm: t('healthReceivers.deleteConfirm', { name: r.name }),
        deleted: t('healthReceivers.deleted', { name: r.name }),
      })}
      save={save}
      remove={remove}
      modal={(receiver, onClose) => <ReceiverModal receiver={receiver} onClose={onClose} />}
      columns={[
        { title: t('healthReceivers.name'), dataIndex: 'name' },
        {
          title: t('healthReceivers.kind'),
          dataIndex: 'kind',
          render: (k: AlertReceiver['kind']) => t(`healthReceivers.kind_${k}`),
        },
        { title: t('healthReceivers.target'), dataIndex: 'target' },
        {
          title: t('healthReceivers.severity'),
          dataIndex: 'severity',
          render: (s: AlertReceiver['severity']) => (
            <Tag color={SEVERITY_COLOR[s]}>{t(`severity.${s}`)}</Tag>
          ),
        },
      ]}
    />
  );
}

const NEW_RECEIVER: Partial<ReceiverValues> = {
  kind: 'webhook',
  severity: 'warning',
  enabled: true,
};

function ReceiverModal({
  receiver,
  onClose,
}: {
  receiver: AlertReceiver | null;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<ReceiverValues>();
  const save = useSaveReceiver();
  // Undefined until the form has mounted its fields (the first render): a webhook until then.
  const email = Form.useWatch('kind', form) === 'email';
  return (
    <FormModal
      title={
        receiver === null
          ? t('healthReceivers.new')
          : t('healthReceivers.editTitle', { name: receiver.name })
      }
      okText={t('healthReceivers.save')}
      form={form}
      pending={save.isPending}
      onClose={onClose}
    >
      <Form<ReceiverValues>
        form={form}
        layout="vertical"
        initialValues={receiver ?? NEW_RECEIVER}
        onFinish={(values) => {
          save.mutate(
            { ...values, name: values.name.trim(), target: values.target.trim(), id: receiver?.id },
            {
              onSuccess: (saved) => {
                void message.success(t('healthReceivers.saved', { name: saved.name }));
                onClose();
              },
              onError: (error) => {
                const { unmatched } = applyServerErrors(form, error, [
                  ['name'],
                  ['kind'],
                  ['target'],
                  ['severity'],
                  ['enabled'],
                ]);
                if (unmatched.length > 0) void message.error(unmatched.join(' '));
              },
            },
          );
        }}
      >
        <Form.Item
          name="name"
          label={t('healthReceivers.name')}
          rules={[{ required: true, whitespace: true, max: 64 }]}
        >
          <Input placeholder="oncall-gpu" />
        </Form.Item>
        <Form.Item name="kind" label={t('healthReceivers.kind')} rules={[{ required: true }]}>
          <Select
            options={KINDS.map((k) => ({ value: k, label: t(`healthReceivers.kind_${k}`) }))}
          />
        </Form.Item>
        <Form.Item
          name="target"
          label={t(email ? 'healthReceivers.target_email' : 'healthReceivers.target_webhook')}
          rules={[
            { required: true, whitespace: true },
            email ? { type: 'email' } : { type: 'url' },
          ]}
        >
          <Input placeholder={email ? 'gpu-oncall@example.com' : 'https://hooks.example.com/zs'} />
        </Form.Item>
        <Form.Item
          name="severity"
          label={t('healthReceivers.severity')}
          extra={t('healthReceivers.severityHelp')}
          rules={[{ required: true }]}
        >
          <Select options={SEVERITIES.map((s) => ({ value: s, label: t(`severity.${s}`) }))} />
        </Form.Item>
        <Form.Item name="enabled" label={t('healthReceivers.enabled')} valuePropName="checked">
          <Switch />
        </Form.Item>
      </Form>
    </FormModal>
  );
}
