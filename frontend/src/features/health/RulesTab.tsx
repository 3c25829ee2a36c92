import { App, Form, Input, InputNumber, Select, Switch, Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import { FormModal } from '../../components/FormModal';
import type { FaultRule } from '../../lib/apiTypes';
import { applyServerErrors } from '../../lib/formErrors';
import { useDeleteRule, useRules, useSaveRule, type RuleValues } from './consoleApi';
import { CatalogueTab } from './CatalogueTab';
import { SEVERITIES, SEVERITY_COLOR } from './healthStyle';

const ACTIONS = [
  'alert',
  'cordon',
  'cordon_drain',
  'remediate',
] as const satisfies FaultRule['fault_action'][];
/** The agent actions the server allows for 'remediate' (apps/health/catalogue.py). */
const REMEDIATIONS = ['restart_fabricmanager'];

/**
 * Health > Fault rules: the catalogue mapping a fault code an agent or the platform reports
 * (`xid:79`, `ib:port_down`, `slow_node`) to a severity and an action. A code without its own
 * rule falls back to its family's (`xid`), so one XID can be tuned without listing the rest.
 */
export function RulesTab() {
  const { t } = useTranslation();
  const rules = useRules();
  const save = useSaveRule();
  const remove = useDeleteRule();
  return (
    <CatalogueTab
      ns="healthRules"
      testId="rules-table"
      query={rules}
      rowTexts={(r) => ({
        enabledLabel: t('healthRules.enabledLabel', { code: r.code }),
        edit: t('healthRules.edit', { code: r.code }),
        deleteLabel: t('healthRules.deleteLabel', { code: r.code }),
        deleteConfirm: t('healthRules.deleteConfirm', { code: r.code }),
        deleted: t('healthRules.deleted', { code: r.code }),
      })}
      save={save}
      remove={remove}
      modal={(rule, onClose) => <RuleModal rule={rule} onClose={onClose} />}
      columns={[
        { title: t('healthRules.code'), dataIndex: 'code' },
        { title: t('healthRules.description'), dataIndex: 'description' },
        {
          title: t('health.severity'),
          dataIndex: 'severity',
          render: (s: FaultRule['severity']) => (
            <Tag color={SEVERITY_COLOR[s]}>{t(`severity.${s}`)}</Tag>
          ),
        },
        {
          title: t('health.action'),
          key: 'action',
          render: (_, r) =>
            r.fault_action === 'remediate'
              ? t('healthRules.remediateWith', {
                  remediation: r.remediation ?? '',
                  count: r.max_remediations ?? 1,
                })
              : t(`faultAction.${r.fault_action}`),
        },
        {
          title: t('healthRules.substituteSpare'),
          dataIndex: 'substitute_spare',
          render: (spare: boolean, r) =>
            r.fault_action === 'alert' ? '—' : spare ? t('common.yes') : t('common.no'),
        },
      ]}
    />
  );
}

const NEW_RULE: Partial<RuleValues> = {
  severity: 'warning',
  fault_action: 'alert',
  remediation: '',
  max_remediations: 1,
  substitute_spare: true,
  enabled: true,
};

function RuleModal({ rule, onClose }: { rule: FaultRule | null; onClose: () => void }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<RuleValues>();
  const save = useSaveRule();
  const action = Form.useWatch('fault_action', form);
  return (
    <FormModal
      title={rule === null ? t('healthRules.new') : t('healthRules.editTitle', { code: rule.code })}
      okText={t('healthRules.save')}
      form={form}
      pending={save.isPending}
      onClose={onClose}
    >
      <Form<RuleValues>
        form={form}
        layout="vertical"
        initialValues={rule ?? NEW_RULE}
        onFinish={(values) => {
          const body = {
            ...values,
            code: values.code.trim(),
            // Only 'remediate' runs an agent action; another action keeps none.
            remediation: values.fault_action === 'remediate' ? values.remediation : '',
          };
          save.mutate(
            { ...body, id: rule?.id },
            {
              onSuccess: (saved) => {
                void message.success(t('healthRules.saved', { code: saved.code }));
                onClose();
              },
              onError: (error) => {
                const { unmatched } = applyServerErrors(form, error, [
                  ['code'],
                  ['description'],
                  ['severity'],
                  ['fault_action'],
                  ['remediation'],
                  ['max_remediations'],
                  ['substitute_spare'],
                  ['enabled'],
                ]);
                if (unmatched.length > 0) void message.error(unmatched.join(' '));
              },
            },
          );
        }}
      >
        <Form.Item
          name="code"
          label={t('healthRules.code')}
          extra={t('healthRules.codeHelp')}
          rules={[{ required: true, whitespace: true, max: 64 }]}
        >
          <Input placeholder="xid:79" />
        </Form.Item>
        <Form.Item name="description" label={t('healthRules.description')} rules={[{ max: 300 }]}>
          <Input />
        </Form.Item>
        <Form.Item name="severity" label={t('health.severity')} rules={[{ required: true }]}>
          <Select options={SEVERITIES.map((s) => ({ value: s, label: t(`severity.${s}`) }))} />
        </Form.Item>
        <Form.Item name="fault_action" label={t('health.action')} rules={[{ required: true }]}>
          <Select options={ACTIONS.map((a) => ({ value: a, label: t(`faultAction.${a}`) }))} />
        </Form.Item>
        {action === 'remediate' && (
          <>
            <Form.Item
              name="remediation"
              label={t('healthRules.remediation')}
              extra={t('healthRules.remediationHelp')}
              rules={[{ required: true }]}
            >
              <Select options={REMEDIATIONS.map((r) => ({ value: r, label: r }))} />
            </Form.Item>
            <Form.Item
              name="max_remediations"
              label={t('healthRules.maxRemediations')}
              rules={[{ required: true }]}
            >
              <InputNumber min={1} max={10} precision={0} />
            </Form.Item>
          </>
        )}
        {action !== 'alert' && (
          <Form.Item
            name="substitute_spare"
            label={t('healthRules.substituteSpare')}
            extra={t('healthRules.substituteSpareHelp')}
            valuePropName="checked"
          >
            <Switch />
          </Form.Item>
        )}
        <Form.Item name="enabled" label={t('healthRules.enabled')} valuePropName="checked">
          <Switch />
        </Form.Item>
      </Form>
    </FormModal>
  );
}
