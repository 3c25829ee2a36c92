import { PlusOutlined } from '@ant-design/icons';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { App, Button, Empty, Form, Input, Popconfirm, Select, Space } from 'antd';
import { useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { CursorPager } from '../../components/CursorPager';
import { QueryTable } from '../../components/QueryTable';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { Member, Role } from '../../lib/apiTypes';
import { useCursorPages } from '../../lib/cursorPages';
import { applyServerErrors } from '../../lib/formErrors';
import { SESSION_QUERY_KEY } from '../../lib/queryClient';
import { useSession } from '../auth/api';

const ROLES = ['tenant_admin', 'member', 'viewer'] as const satisfies Role[];

/**
 * Settings > Members: the tenant's members and their roles (tenant admins). Changing your own
 * role or removing yourself asks first: you may lose the right to undo it. The server keeps
 * one tenant admin at least (409), whatever the page allows.
 */
export function Members({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const { message, modal } = App.useApp();
  const client = useQueryClient();
  const me = useSession().data?.user.username;
  const key = ['members', tenant];
  const [form] = Form.useForm<{ username: string; role: Role }>();
  // A double click submits the form twice before `add.isPending` re-renders the button:
  // the second submit is dropped here, not sent as a second POST.
  const adding = useRef(false);
  const pages = useCursorPages(tenant);
  const cursor = pages.cursor;
  const members = useQuery({
    queryKey: [...key, cursor],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/members/', {
          params: { path: { tenant }, query: { cursor } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const done = (self: boolean) => {
    void client.invalidateQueries({ queryKey: key });
    // Your own role changed: what the console offers you changes with it.
    if (self) void client.invalidateQueries({ queryKey: SESSION_QUERY_KEY });
  };
  const add = useMutation<Member, ApiError, { username: string; role: Role }>({
    mutationFn: (body) =>
      unwrap(api.POST('/api/v1/tenants/{tenant}/members/', { params: { path: { tenant } }, body })),
    onSuccess: (added) => {
      form.resetFields();
      void message.success(t('settings.memberAdded', { user: added.username }));
      done(false);
    },
    onError: (error) => {
      const { unmatched } = applyServerErrors(form, error, [['username'], ['role']]);
      if (unmatched.length > 0) void message.error(unmatched.join(' '));
    },
    onSettled: () => {
      adding.current = false;
    },
  });
  const setRole = useMutation<Member, ApiError, { member: Member; role: Role }>({
    mutationFn: ({ member, role }) =>
      unwrap(
        api.PATCH('/api/v1/tenants/{tenant}/members/{id}/', {
          params: { path: { tenant, id: member.id } },
          body: { role },
        }),
      ),
    onSuccess: (_, { member, role }) => {
      void message.success(
        t('settings.roleChanged', { user: member.username, role: t(`roles.${role}`) }),
      );
      done(member.username === me);
    },
    onError: (e) => void message.error(e.summary),
  });
  const remove = useMutation<undefined, ApiError, Member>({
    mutationFn: async (member) => {
      await unwrap(
        api.DELETE('/api/v1/tenants/{tenant}/members/{id}/', {
          params: { path: { tenant, id: member.id } },
        }),
      );
      return undefined;
    },
    onSuccess: (_, member) => {
      void message.success(t('settings.memberRemoved', { user: member.username }));
      done(member.username === me);
    },
    onError: (e) => void message.error(e.summary),
  });
  const roleOptions = ROLES.map((r) => ({ value: r, label: t(`roles.${r}`) }));
  const changeRole = (member: Member, role: Role) => {
    if (member.username !== me) {
      setRole.mutate({ member, role });
      return;
    }
    void modal.confirm({
      title: t('settings.ownRoleConfirm', { role: t(`roles.${role}`) }),
      content: t('settings.ownRoleHint'),
      okText: t('settings.ownRoleOk'),
      cancelText: t('common.no'),
      onOk: () => {
        setRole.mutate({ member, role });
      },
    });
  };

  return (
    <Space orientation="vertical" size={16} style={{ width: '100%' }}>
      <Form
        form={form}
        layout="inline"
        name="member"
        initialValues={{ role: 'member' }}
        onFinish={(values) => {
          if (adding.current) return;
          adding.current = true;
          add.mutate({ ...values, username: values.username.trim() });
        }}
      >
        <Form.Item
          name="username"
          label={t('settings.username')}
          rules={[{ required: true, whitespace: true, message: t('settings.usernameRequired') }]}
        >
          <Input />
        </Form.Item>
        <Form.Item name="role" label={t('settings.role')}>
          <Select<Role> style={{ width: 160 }} options={roleOptions} />
        </Form.Item>
        <Button type="primary" htmlType="submit" icon={<PlusOutlined />} loading={add.isPending}>
          {t('settings.addMember')}
        </Button>
      </Form>
      <QueryTable<Member>
        rowKey="id"
        size="small"
        query={members}
        pagination={false}
        data-testid="members-table"
        rows={members.data?.results ?? []}
        locale={{ emptyText: <Empty description={t('settings.noMembers')} /> }}
        columns={[
          { title: t('settings.username'), dataIndex: 'username' },
          { title: t('settings.displayName'), dataIndex: 'display_name' },
          {
            title: t('settings.role'),
            key: 'role',
            render: (_, m) => (
              <Select<Role>
                size="small"
                style={{ width: 160 }}
                aria-label={t('settings.roleOf', { user: m.username })}
                value={m.role}
                options={roleOptions}
                onChange={(role) => {
                  changeRole(m, role);
                }}
              />
            ),
          },
          {
            title: t('common.actions'),
            key: 'remove',
            render: (_, m) => (
              <Popconfirm
                title={
                  m.username === me
                    ? t('settings.removeSelfConfirm')
                    : t('settings.removeConfirm', { user: m.username })
                }
                description={<div style={{ maxWidth: 320 }}>{t('settings.removeHint')}</div>}
                okText={t('settings.remove')}
                cancelText={t('common.no')}
                onConfirm={() => {
                  remove.mutate(m);
                }}
              >
                <Button size="small" danger>
                  {t('settings.remove')}
                </Button>
              </Popconfirm>
            ),
          },
        ]}
      />
      <CursorPager pages={pages} query={members} testId="members-page" size="small" />
    </Space>
  );
}
