import { UndoOutlined } from '@ant-design/icons';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { App, Button, Card, Popconfirm, Space, Table, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { api, type ApiError, unwrap } from '../../lib/api';
import { formatDuration } from '../../lib/format';
import { currentLanguage } from '../../lib/i18n';
import type { TenantPolicy } from '../../lib/apiTypes';
import { governanceKeys, useTenantPolicy } from '../governance/api';

/** The rules a tenant may set, in the order the policy lists them. */
const RULES = [
  'util_threshold_pct',
  'training_idle_s',
  'notebook_idle_s',
  'grace_s',
  'max_extensions',
  'extension_s',
  'queue_action',
  'max_runtime_s',
] as const;
type Rule = (typeof RULES)[number];
type Effective = TenantPolicy['effective'];

function isRule(name: string): name is Rule {
  return (RULES as readonly string[]).includes(name);
}

/**
 * Settings > Idle GPUs, for tenant admins: the rules this tenant set itself (every other rule
 * follows the platform default, loosened or tightened later), each with a way back to the
 * default, and all of them at once.
 */
export function IdlePolicyReset({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const language = currentLanguage();
  const { message } = App.useApp();
  const client = useQueryClient();
  const policy = useTenantPolicy(tenant);
  const reset = useMutation<TenantPolicy, ApiError, Rule[]>({
    mutationFn: (rules) =>
      unwrap(
        api.PATCH('/api/v1/tenants/{tenant}/governance/policy/', {
          params: { path: { tenant } },
          body: { reset: rules },
        }),
      ),
    onSuccess: (saved) => {
      client.setQueryData(governanceKeys.policy(tenant), saved);
      void message.success(t('idle.resetDone'));
    },
    onError: (e) => void message.error(e.summary),
  });
  if (policy.data === undefined) return null; // the policy card above shows loading and errors
  const { effective, default: platform } = policy.data;
  // A server from before `overrides` (mid-upgrade) sends none: then nothing to reset here.
  const listed = policy.data.overrides as readonly string[] | undefined;
  const own = (listed ?? []).filter(isRule);
  const show = (rule: Rule, source: Effective | TenantPolicy['default']): string => {
    const value = source[rule];
    if (rule === 'queue_action')
      return t(value === 'escalate' ? 'idle.queue_escalate' : 'idle.queue_expire');
    if (typeof value !== 'number') return rule === 'max_runtime_s' ? t('idle.noCap') : '—';
    if (rule === 'util_threshold_pct') return `${String(value)} %`;
    if (rule === 'max_extensions') return String(value);
    return formatDuration(value, language);
  };
  return (
    <Card size="small" title={t('idle.ownRules')} data-testid="idle-reset">
      {own.length === 0 ? (
        <Typography.Text type="secondary">{t('idle.followsDefault')}</Typography.Text>
      ) : (
        <Space orientation="vertical" size={12} style={{ width: '100%' }}>
          <Typography.Text type="secondary">{t('idle.ownRulesHint')}</Typography.Text>
          <Table<{ rule: Rule }>
            rowKey="rule"
            size="small"
            pagination={false}
            scroll={{ x: 'max-content' }}
            dataSource={own.map((rule) => ({ rule }))}
            columns={[
              { title: t('idle.rule'), key: 'rule', render: (_, r) => t(`idle.${r.rule}`) },
              {
                title: t('idle.tenantValue'),
                key: 'own',
                render: (_, r) => show(r.rule, effective),
              },
              {
                title: t('idle.defaultValue'),
                key: 'default',
                render: (_, r) => show(r.rule, platform),
              },
              {
                title: '',
                key: 'reset',
                render: (_, r) => (
                  <Button
                    size="small"
                    icon={<UndoOutlined />}
                    disabled={reset.isPending}
                    aria-label={t('idle.resetRule', { rule: t(`idle.${r.rule}`) })}
                    onClick={() => {
                      reset.mutate([r.rule]);
                    }}
                  >
                    {t('idle.reset')}
                  </Button>
                ),
              },
            ]}
          />
          <Popconfirm
            title={t('idle.resetAllConfirm')}
            okText={t('idle.resetAll')}
            cancelText={t('common.no')}
            onConfirm={() => {
              reset.mutate([...RULES]);
            }}
          >
            <Button danger loading={reset.isPending} data-testid="idle-reset-all">
              {t('idle.resetAll')}
            </Button>
          </Popconfirm>
        </Space>
      )}
    </Card>
  );
}
