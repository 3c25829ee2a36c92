import { DeleteOutlined, PlusOutlined, QuestionCircleOutlined } from '@ant-design/icons';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  Alert,
  App,
  Button,
  Card,
  Checkbox,
  Empty,
  Form,
  Input,
  InputNumber,
  Popconfirm,
  Space,
  Tabs,
  Tag,
  Tooltip,
  Typography,
} from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/PageHeader';
import { QueryTable } from '../../components/QueryTable';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { ApiToken, NewApiToken } from '../../lib/apiTypes';
import { formatDateTime } from '../../lib/format';
import { applyServerErrors } from '../../lib/formErrors';
import { currentLanguage } from '../../lib/i18n';
import { useSession } from '../auth/api';
import { useTenant } from '../tenancy/useTenant';
import { DefaultPolicyTab } from '../governance/DefaultPolicyTab';
import { IdlePolicyTab } from '../governance/IdlePolicyTab';
import { ProjectsTab } from '../projects/ProjectsTab';
import { AuditLog } from './AuditLog';
import { IdlePolicyReset } from './IdlePolicyReset';
import { Members } from './Members';
import { Profile } from './Profile';
import { Users } from './Users';

export function SettingsPage() {
  const { t } = useTranslation();
  const tenant = useTenant();
  const user = useSession().data?.user;
  return (
    <>
      <PageHeader title={t('settings.title')} subtitle={t('settings.subtitle')} />
      <Card>
        <Tabs
          items={[
            { key: 'tokens', label: t('settings.tokens'), children: <Tokens /> },
            ...(tenant.slug !== null && tenant.isTenantAdmin
              ? [
                  {
                    key: 'members',
                    label: t('settings.members'),
                    children: <Members tenant={tenant.slug} />,
                  },
                ]
              : []),
            ...(tenant.slug !== null
              ? [
                  {
                    key: 'projects',
                    label: t('projects.tab'),
                    children: <ProjectsTab tenant={tenant.slug} canWrite={tenant.canWrite} />,
                  },
                  {
                    key: 'idle',
                    label: t('idle.tab'),
                    children: (
                      <Space orientation="vertical" size={16} style={{ width: '100%' }}>
                        <IdlePolicyTab tenant={tenant.slug} isAdmin={tenant.isTenantAdmin} />
                        {tenant.isTenantAdmin && <IdlePolicyReset tenant={tenant.slug} />}
                      </Space>
                    ),
                  },
                ]
              : []),
            ...(tenant.isPlatformAdmin
              ? [
                  { key: 'users', label: t('users.tab'), children: <Users /> },
                  {
                    key: 'platform-idle',
                    label: t('idle.defaultTab'),
                    children: <DefaultPolicyTab />,
                  },
                ]
              : []),
            ...(tenant.isPlatformAdmin || (tenant.slug !== null && tenant.isTenantAdmin)
              ? [
                  {
                    key: 'audit',
                    label: t('audit.tab'),
                    // Platform admins read the whole log; tenant admins their tenant's part.
                    children: <AuditLog tenant={tenant.isPlatformAdmin ? null : tenant.slug} />,
                  },
                ]
              : []),
            ...(user
              ? [
                  {
                    key: 'profile',
                    label: t('settings.profile'),
                    children: <Profile user={user} />,
                  },
                ]
              : []),
          ]}
        />
      </Card>
    </>
  );
}

/** What the new-token form sends: a read-only token may only read (the server refuses the
 * rest with 403). */
interface TokenValues {
  name: string;
  ttl_days: number;
  read_only: boolean;
}

function Tokens() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const language = currentLanguage();
  const client = useQueryClient();
  const [form] = Form.useForm<TokenValues>();
  const [created, setCreated] = useState<NewApiToken | null>(null);
  const tokens = useQuery({
    queryKey: ['tokens'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/v1/tokens/', { signal })),
  });
  const create = useMutation<NewApiToken, ApiError, TokenValues>({
    mutationFn: (body) => unwrap(api.POST('/api/v1/tokens/', { body })),
    onSuccess: (token) => {
      setCreated(token);
      form.resetFields();
      void client.invalidateQueries({ queryKey: ['tokens'] });
    },
    onError: (error) => {
      const { unmatched } = applyServerErrors(form, error, [['name'], ['ttl_days'], ['read_only']]);
      if (unmatched.length > 0) void message.error(unmatched.join(' '));
    },
  });
  const revoke = useMutation<undefined, ApiError, number>({
    mutationFn: async (id) => {
      await unwrap(api.DELETE('/api/v1/tokens/{id}/', { params: { path: { id } } }));
      return undefined;
    },
    onSuccess: () => {
      void message.success(t('settings.revoked'));
      void client.invalidateQueries({ queryKey: ['tokens'] });
    },
    onError: (e) => void message.error(e.summary),
  });

  return (
    <Space orientation="vertical" size={16} style={{ width: '100%' }}>
      <Form
        form={form}
        layout="inline"
        name="token"
        initialValues={{ ttl_days: 90, read_only: false }}
        onFinish={(values) => {
          create.mutate(values);
        }}
      >
        <Form.Item
          name="name"
          label={t('settings.tokenName')}
          rules={[{ required: true, whitespace: true, message: t('settings.tokenNameRequired') }]}
        >
          <Input placeholder="ci-pipeline" />
        </Form.Item>
        <Form.Item name="ttl_days" label={t('settings.ttl')}>
          <InputNumber min={1} max={365} />
        </Form.Item>
        <Form.Item name="read_only" valuePropName="checked">
          <Checkbox>
            {t('settings.readOnly')}{' '}
            <Tooltip title={t('settings.readOnlyHint')}>
              <QuestionCircleOutlined aria-label={t('settings.readOnlyHint')} />
            </Tooltip>
          </Checkbox>
        </Form.Item>
        <Button type="primary" htmlType="submit" icon={<PlusOutlined />} loading={create.isPending}>
          {t('settings.createToken')}
        </Button>
      </Form>
      {created !== null && (
        <Alert
          type="success"
          showIcon
          closable={{
            onClose: () => {
              setCreated(null);
            },
          }}
          data-testid="new-token"
          title={t('settings.tokenCreated', { name: created.name })}
          description={
            <Space orientation="vertical">
              <Typography.Text>{t('settings.tokenOnce')}</Typography.Text>
              <Typography.Text
                code
                copyable={{ text: created.token }}
                data-testid="new-token-value"
              >
                {created.token}
              </Typography.Text>
            </Space>
          }
        />
      )}
      <QueryTable<ApiToken>
        rowKey="id"
        size="small"
        query={tokens}
        pagination={false}
        data-testid="tokens-table"
        rows={tokens.data?.results ?? []}
        locale={{ emptyText: <Empty description={t('settings.noTokens')} /> }}
        columns={[
          { title: t('settings.tokenName'), dataIndex: 'name' },
          {
            title: t('settings.prefix'),
            dataIndex: 'prefix',
            render: (p: string) => <code>{p}…</code>,
          },
          {
            title: t('settings.created'),
            dataIndex: 'created_at',
            render: (a: string) => formatDateTime(a, language),
          },
          {
            title: t('settings.expires'),
            dataIndex: 'expires_at',
            render: (a: string) => formatDateTime(a, language),
          },
          {
            title: t('settings.lastUsed'),
            dataIndex: 'last_used_at',
            render: (a: string | null) => formatDateTime(a, language),
          },
          {
            title: t('jobs.state'),
            key: 'state',
            render: (_, tok) => (
              <>
                {tok.is_active ? (
                  <Tag color="green">{t('settings.active')}</Tag>
                ) : (
                  <Tag>{t('settings.inactive')}</Tag>
                )}
                {tok.read_only && <Tag data-testid="token-read-only">{t('settings.readOnly')}</Tag>}
              </>
            ),
          },
          {
            title: t('common.actions'),
            key: 'revoke',
            render: (_, tok) =>
              tok.is_active ? (
                <Popconfirm
                  title={t('settings.revokeConfirm', { name: tok.name })}
                  okText={t('settings.revoke')}
                  cancelText={t('common.no')}
                  onConfirm={() => {
                    revoke.mutate(tok.id);
                  }}
                >
                  <Button size="small" danger icon={<DeleteOutlined />}>
                    {t('settings.revoke')}
                  </Button>
                </Popconfirm>
              ) : null,
          },
        ]}
      />
    </Space>
  );
}
