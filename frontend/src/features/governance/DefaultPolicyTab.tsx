import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { App, Button, Card, Form, Skeleton, Space, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormModal } from '../../components/FormModal';
import { QueryErrorResult } from '../../components/QueryErrorResult';
import { api, unwrap, type ApiError } from '../../lib/api';
import type { DefaultPolicy } from '../../lib/apiTypes';
import { applyServerErrors } from '../../lib/formErrors';
import { PolicyFormItems, PolicySummary } from './policyFields';

// Outside ['governance', ...]: saving it refreshes the tenants' policies, not itself.
const DEFAULT_KEY = ['default-policy'] as const;

/**
 * Settings > Platform idle policy (platform admins): the default every tenant without its own
 * policy runs under, and the loosest any tenant may set. Tightening it tightens every tenant
 * at once (a tenant's policy is clamped to it); loosening it loosens only the tenants that
 * follow the default.
 */
export function DefaultPolicyTab() {
  const { t } = useTranslation();
  const [editing, setEditing] = useState(false);
  const policy = useQuery({
    queryKey: DEFAULT_KEY,
    queryFn: ({ signal }) => unwrap(api.GET('/api/v1/governance/default-policy/', { signal })),
  });
  if (policy.isPending) return <Skeleton active />;
  if (policy.isError)
    return <QueryErrorResult error={policy.error} onRetry={() => void policy.refetch()} />;
  return (
    <Space orientation="vertical" size={12} style={{ width: '100%' }}>
      <Typography.Text type="secondary">{t('idle.defaultHint')}</Typography.Text>
      <Card
        size="small"
        title={t('idle.defaultTitle')}
        extra={
          <Button
            size="small"
            onClick={() => {
              setEditing(true);
            }}
            data-testid="edit-default-policy"
          >
            {t('idle.editDefault')}
          </Button>
        }
      >
        <PolicySummary policy={policy.data} webhook={false} testId="default-policy" />
      </Card>
      {editing && (
        <DefaultPolicyModal
          current={policy.data}
          onClose={() => {
            setEditing(false);
          }}
        />
      )}
    </Space>
  );
}

function DefaultPolicyModal({ current, onClose }: { current: DefaultPolicy; onClose: () => void }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const client = useQueryClient();
  const [form] = Form.useForm<DefaultPolicy>();
  const save = useMutation<DefaultPolicy, ApiError, DefaultPolicy>({
    // A cleared runtime cap is sent as null (no cap); an absent field would keep the old cap.
    mutationFn: (body) =>
      unwrap(
        api.PUT('/api/v1/governance/default-policy/', {
          body: { ...body, max_runtime_s: body.max_runtime_s ?? null },
        }),
      ),
    onSuccess: (saved) => {
      client.setQueryData(DEFAULT_KEY, saved);
      // Every tenant's effective policy may have changed with it.
      void client.invalidateQueries({ queryKey: ['governance'] });
      void message.success(t('idle.saved'));
      onClose();
    },
    onError: (error) => {
      const known = Object.keys(current).map((k) => [k]);
      const { unmatched } = applyServerErrors(form, error, known);
      if (unmatched.length > 0) void message.error(unmatched.join(' '));
    },
  });
  return (
    <FormModal
      title={t('idle.editDefaultTitle')}
      okText={t('idle.save')}
      form={form}
      pending={save.isPending}
      onClose={onClose}
    >
      <Form<DefaultPolicy>
        form={form}
        layout="vertical"
        initialValues={current}
        onFinish={(values) => {
          save.mutate(values);
        }}
      >
        <PolicyFormItems webhook={false} />
      </Form>
    </FormModal>
  );
}
