import { App, Button, Divider, Form, Input, Space, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { LanguageSwitch } from '../../components/LanguageSwitch';
import { reportServerErrors } from '../../lib/formErrors';
import type { SessionUser } from '../../lib/apiTypes';
import { useChangePassword, useSaveProfile } from '../auth/api';

interface ProfileValues {
  display_name: string;
  email: string;
}

interface PasswordValues {
  current_password: string;
  new_password: string;
  confirm: string;
}

/** The signed-in person's own name, email address, language and password. */
export function Profile({ user }: { user: SessionUser }) {
  const { t } = useTranslation();
  return (
    <Space orientation="vertical" size={8} style={{ width: '100%', maxWidth: 560 }}>
      <Typography.Text type="secondary">
        {t('settings.profileOf', { username: user.username })}
      </Typography.Text>
      <ProfileForm user={user} />
      <Divider titlePlacement="start">{t('settings.language')}</Divider>
      <Space wrap>
        <Typography.Text>{t('settings.languageHint')}</Typography.Text>
        <LanguageSwitch />
      </Space>
      <Typography.Text type="secondary">{t('settings.languageEmail')}</Typography.Text>
      <Divider titlePlacement="start">{t('settings.password')}</Divider>
      {user.has_password ? (
        <PasswordForm />
      ) : (
        <Typography.Text type="secondary">{t('settings.passwordSso')}</Typography.Text>
      )}
    </Space>
  );
}

function ProfileForm({ user }: { user: SessionUser }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<ProfileValues>();
  const save = useSaveProfile();
  return (
    <Form
      form={form}
      layout="vertical"
      name="profile"
      initialValues={{ display_name: user.display_name, email: user.email }}
      onFinish={(values) => {
        save.mutate(values, {
          onSuccess: () => void message.success(t('settings.profileSaved')),
          onError: (error) => {
            reportServerErrors(form, error, [['display_name'], ['email']], message);
          },
        });
      }}
    >
      <Form.Item
        name="display_name"
        label={t('settings.displayName')}
        rules={[{ max: 150, message: t('settings.displayNameLong') }]}
      >
        <Input autoComplete="name" />
      </Form.Item>
      <Form.Item
        name="email"
        label={t('settings.email')}
        extra={t('settings.emailHint')}
        rules={[{ type: 'email', message: t('settings.emailInvalid') }]}
      >
        <Input type="email" autoComplete="email" placeholder="name@example.com" />
      </Form.Item>
      <Button type="primary" htmlType="submit" loading={save.isPending}>
        {t('settings.saveProfile')}
      </Button>
    </Form>
  );
}

function PasswordForm() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const [form] = Form.useForm<PasswordValues>();
  const change = useChangePassword();
  return (
    <Form
      form={form}
      layout="vertical"
      name="password"
      onFinish={({ current_password, new_password }) => {
        change.mutate(
          { current_password, new_password },
          {
            onSuccess: () => {
              form.resetFields();
              void message.success(t('settings.passwordChanged'));
            },
            onError: (error) => {
              reportServerErrors(form, error, [['current_password'], ['new_password']], message);
            },
          },
        );
      }}
    >
      <Form.Item
        name="current_password"
        label={t('settings.currentPassword')}
        rules={[{ required: true, message: t('settings.currentPasswordRequired') }]}
      >
        <Input.Password autoComplete="current-password" />
      </Form.Item>
      <Form.Item
        name="new_password"
        label={t('settings.newPassword')}
        rules={[{ required: true, message: t('settings.newPasswordRequired') }]}
      >
        <Input.Password autoComplete="new-password" />
      </Form.Item>
      <Form.Item
        name="confirm"
        label={t('settings.confirmPassword')}
        dependencies={['new_password']}
        rules={[
          { required: true, message: t('settings.confirmPasswordRequired') },
          ({ getFieldValue }) => ({
            validator: (_, value) =>
              value === undefined || value === '' || value === getFieldValue('new_password')
                ? Promise.resolve()
                : Promise.reject(new Error(t('settings.passwordsDiffer'))),
          }),
        ]}
      >
        <Input.Password autoComplete="new-password" />
      </Form.Item>
      <Typography.Paragraph type="secondary">{t('settings.passwordHint')}</Typography.Paragraph>
      <Button htmlType="submit" loading={change.isPending}>
        {t('settings.changePassword')}
      </Button>
    </Form>
  );
}
