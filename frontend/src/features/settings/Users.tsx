import { PlusOutlined } from '@ant-design/icons';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  App,
  Button,
  Checkbox,
  Empty,
  Form,
  Input,
  Popconfirm,
  Segmented,
  Space,
  Tag,
  Typography,
} from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CursorPager } from '../../components/CursorPager';
import { FormModal } from '../../components/FormModal';
import { QueryTable } from '../../components/QueryTable';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { AdminUser, AdminUserCreate, AdminUserEdit } from '../../lib/apiTypes';
import { useCursorPages } from '../../lib/cursorPages';
import { formatDateTime } from '../../lib/format';
import { reportServerErrors } from '../../lib/formErrors';
import { currentLanguage } from '../../lib/i18n';
import { useSession } from '../auth/api';

type Shown = 'active' | 'inactive' | 'all';

/**
 * Settings > Users (platform admins): everyone who may sign in. Create a user with a first
 * password, edit their name, address and platform rights, deactivate them (their jobs and
 * history stay; sign-in and API tokens stop), or set a new password for one who lost theirs.
 * Which tenants they work in is each tenant's admins' (Members).
 */
export function Users() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const client = useQueryClient();
  const language = currentLanguage();
  const me = useSession().data?.user.id;
  const [search, setSearch] = useState('');
  const [shown, setShown] = useState<Shown>('active');
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<AdminUser | null>(null);
  const [resetting, setResetting] = useState<AdminUser | null>(null);
  const pages = useCursorPages(`${search}|${shown}`);
  const cursor = pages.cursor;
  const users = useQuery({
    queryKey: ['users', search, shown, cursor],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/users/', {
          params: {
            query: {
              cursor,
              search: search === '' ? undefined : search,
              is_active: shown === 'all' ? undefined : shown === 'active',
            },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const setActive = useMutation<AdminUser, ApiError, { user: AdminUser; active: boolean }>({
    mutationFn: ({ user, active }) =>
      unwrap(
        api.PATCH('/api/v1/users/{id}/', {
          params: { path: { id: user.id } },
          body: { is_active: active },
        }),
      ),
    onSuccess: (user) => {
      void message.success(
        t(user.is_active ? 'users.activated' : 'users.deactivated', { user: user.username }),
      );
      void client.invalidateQueries({ queryKey: ['users'] });
    },
    onError: (e) => void message.error(e.summary),
  });

  return (
    <Space orientation="vertical" size={16} style={{ width: '100%' }}>
      <Space wrap>
        <Input.Search
          allowClear
          placeholder={t('users.search')}
          aria-label={t('users.search')}
          style={{ width: 280 }}
          onSearch={(value) => {
            setSearch(value.trim());
          }}
        />
        <Segmented<Shown>
          aria-label={t('users.shown')}
          value={shown}
          onChange={setShown}
          options={[
            { value: 'active', label: t('users.active') },
            { value: 'inactive', label: t('users.inactive') },
            { value: 'all', label: t('users.all') },
          ]}
        />
        <Button
          type="primary"
          icon={<PlusOutlined />}
          onClick={() => {
            setCreating(true);
          }}
        >
          {t('users.create')}
        </Button>
      </Space>
      <Typography.Text type="secondary">{t('users.hint')}</Typography.Text>
      <QueryTable<AdminUser>
        rowKey="id"
        size="small"
        query={users}
        pagination={false}
        data-testid="users-table"
        rows={users.data?.results ?? []}
        locale={{ emptyText: <Empty description={t('users.none')} /> }}
        columns={[
          { title: t('settings.username'), dataIndex: 'username' },
          { title: t('settings.displayName'), dataIndex: 'display_name' },
          { title: t('settings.email'), dataIndex: 'email' },
          {
            title: t('users.tenants'),
            key: 'tenants',
            render: (_, u) =>
              u.memberships.length === 0 ? (
                <Typography.Text type="secondary">{t('users.noTenant')}</Typography.Text>
              ) : (
                u.memberships.map((m) => (
                  <Tag key={m.tenant}>
                    {m.tenant} · {t(`roles.${m.role}`)}
                  </Tag>
                ))
              ),
          },
          {
            title: t('users.rights'),
            key: 'rights',
            render: (_, u) => (
              <>
                {u.is_platform_admin && <Tag color="purple">{t('users.platformAdmin')}</Tag>}
                {!u.is_active && <Tag>{t('users.deactivatedTag')}</Tag>}
              </>
            ),
          },
          {
            title: t('users.lastLogin'),
            dataIndex: 'last_login',
            render: (at: string | null) => formatDateTime(at, language),
          },
          {
            title: t('common.actions'),
            key: 'actions',
            render: (_, u) => (
              <Space size={4} wrap>
                <Button
                  size="small"
                  onClick={() => {
                    setEditing(u);
                  }}
                >
                  {t('users.edit')}
                </Button>
                <Button
                  size="small"
                  onClick={() => {
                    setResetting(u);
                  }}
                >
                  {t('users.setPassword')}
                </Button>
                {u.id !== me &&
                  (u.is_active ? (
                    <Popconfirm
                      title={t('users.deactivateConfirm', { user: u.username })}
                      description={<div style={{ maxWidth: 320 }}>{t('users.deactivateHint')}</div>}
                      okText={t('users.deactivate')}
                      cancelText={t('common.no')}
                      onConfirm={() => {
                        setActive.mutate({ user: u, active: false });
                      }}
                    >
                      <Button size="small" danger>
                        {t('users.deactivate')}
                      </Button>
                    </Popconfirm>
                  ) : (
                    <Button
                      size="small"
                      onClick={() => {
                        setActive.mutate({ user: u, active: true });
                      }}
                    >
                      {t('users.activate')}
                    </Button>
                  ))}
              </Space>
            ),
          },
        ]}
      />
      <CursorPager pages={pages} query={users} testId="users-page" size="small" order="name" />
      {creating && (
        <CreateUser
          onClose={() => {
            setCreating(false);
          }}
        />
      )}
      {editing !== null && (
        <EditUser
          user={editing}
          self={editing.id === me}
          onClose={() => {
            setEditing(null);
          }}
        />
      )}
      {resetting !== null && (
        <SetPassword
          user={resetting}
          onClose={() => {
            setResetting(null);
          }}
        />
      )}
    </Space>
  );
}

function CreateUser({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const client = useQueryClient();
  const [form] = Form.useForm<AdminUserCreate>();
  const create = useMutation<AdminUser, ApiError, AdminUserCreate>({
    mutationFn: (body) => unwrap(api.POST('/api/v1/users/', { body })),
    onSuccess: (user) => {
      void message.success(t('users.created', { user: user.username }));
      void client.invalidateQueries({ queryKey: ['users'] });
      onClose();
    },
    onError: (error) => {
      reportServerErrors(
        form,
        error,
        [['username'], ['display_name'], ['email'], ['password'], ['is_platform_admin']],
        message,
      );
    },
  });
  return (
    <FormModal
      title={t('users.create')}
      okText={t('users.createOk')}
      form={form}
      pending={create.isPending}
      onClose={onClose}
    >
      <Form
        form={form}
        layout="vertical"
        name="new-user"
        initialValues={{ is_platform_admin: false }}
        onFinish={(values) => {
          create.mutate({ ...values, username: values.username.trim() });
        }}
      >
        <Form.Item
          name="username"
          label={t('settings.username')}
          rules={[{ required: true, whitespace: true, message: t('settings.usernameRequired') }]}
        >
          <Input autoComplete="off" />
        </Form.Item>
        <Form.Item name="display_name" label={t('settings.displayName')}>
          <Input />
        </Form.Item>
        <Form.Item
          name="email"
          label={t('settings.email')}
          rules={[{ type: 'email', message: t('settings.emailInvalid') }]}
        >
          <Input type="email" />
        </Form.Item>
        <Form.Item
          name="password"
          label={t('users.firstPassword')}
          extra={t('users.firstPasswordHint')}
          rules={[{ required: true, message: t('settings.newPasswordRequired') }]}
        >
          <Input.Password autoComplete="new-password" />
        </Form.Item>
        <Form.Item name="is_platform_admin" valuePropName="checked">
          <Checkbox>{t('users.platformAdmin')}</Checkbox>
        </Form.Item>
      </Form>
    </FormModal>
  );
}

function EditUser({
  user,
  self,
  onClose,
}: {
  user: AdminUser;
  self: boolean;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const client = useQueryClient();
  const [form] = Form.useForm<AdminUserEdit>();
  const save = useMutation<AdminUser, ApiError, AdminUserEdit>({
    mutationFn: (body) =>
      unwrap(api.PATCH('/api/v1/users/{id}/', { params: { path: { id: user.id } }, body })),
    onSuccess: (saved) => {
      void message.success(t('users.saved', { user: saved.username }));
      void client.invalidateQueries({ queryKey: ['users'] });
      onClose();
    },
    onError: (error) => {
      reportServerErrors(
        form,
        error,
        [['display_name'], ['email'], ['is_platform_admin']],
        message,
      );
    },
  });
  return (
    <FormModal
      title={t('users.editTitle', { user: user.username })}
      okText={t('common.save')}
      form={form}
      pending={save.isPending}
      onClose={onClose}
    >
      <Form
        form={form}
        layout="vertical"
        name="edit-user"
        initialValues={{
          display_name: user.display_name,
          email: user.email,
          is_platform_admin: user.is_platform_admin,
        }}
        onFinish={(values) => {
          save.mutate(values);
        }}
      >
        <Form.Item name="display_name" label={t('settings.displayName')}>
          <Input />
        </Form.Item>
        <Form.Item
          name="email"
          label={t('settings.email')}
          rules={[{ type: 'email', message: t('settings.emailInvalid') }]}
        >
          <Input type="email" />
        </Form.Item>
        <Form.Item
          name="is_platform_admin"
          valuePropName="checked"
          extra={self ? t('users.selfRights') : undefined}
        >
          <Checkbox disabled={self}>{t('users.platformAdmin')}</Checkbox>
        </Form.Item>
      </Form>
    </FormModal>
  );
}

function SetPassword({ user, onClose }: { user: AdminUser; onClose: () => void }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<{ password: string }>();
  const set = useMutation<undefined, ApiError, { password: string }>({
    mutationFn: async (body) => {
      await unwrap(
        api.POST('/api/v1/users/{id}/password/', { params: { path: { id: user.id } }, body }),
      );
      return undefined;
    },
    onSuccess: () => {
      void message.success(t('users.passwordSet', { user: user.username }));
      onClose();
    },
    onError: (error) => {
      reportServerErrors(form, error, [['password']], message);
    },
  });
  return (
    <FormModal
      title={t('users.setPasswordTitle', { user: user.username })}
      okText={t('users.setPassword')}
      form={form}
      pending={set.isPending}
      onClose={onClose}
    >
      <Form
        form={form}
        layout="vertical"
        name="set-password"
        onFinish={(values) => {
          set.mutate(values);
        }}
      >
        <Typography.Paragraph type="secondary">{t('users.setPasswordHint')}</Typography.Paragraph>
        <Form.Item
          name="password"
          label={t('settings.newPassword')}
          rules={[{ required: true, message: t('settings.newPasswordRequired') }]}
        >
          <Input.Password autoComplete="new-password" />
        </Form.Item>
      </Form>
    </FormModal>
  );
}
