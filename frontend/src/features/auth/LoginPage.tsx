import { LockOutlined, UserOutlined } from '@ant-design/icons';
import { useQuery } from '@tanstack/react-query';
import { Alert, Button, Card, Divider, Form, Input, Typography } from 'antd';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Navigate, useSearchParams } from 'react-router';
import { BrandMark } from '../../components/BrandMark';
import { LanguageSwitch } from '../../components/LanguageSwitch';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { LoginBody } from '../../lib/apiTypes';
import { useDocumentTitle } from '../../lib/useDocumentTitle';
import { useLogin, useSession } from './api';
import { isServerPath, safeNextPath } from './next';
import styles from './LoginPage.module.css';

function useLoginErrorMessage(error: ApiError | null): string | null {
  const { t } = useTranslation();
  if (error === null) {
    return null;
  }
  if (error.status === 400) {
    return t('login.invalidCredentials');
  }
  if (error.status === 429) {
    return t('login.throttled');
  }
  if (error.status === 0) {
    return t('login.failed', { detail: t('errors.network') });
  }
  return t('login.failed', { detail: error.detail });
}

/** A full page load, for a path the dashboard's router does not own (an open notebook). */
function ServerRedirect({ to }: { to: string }) {
  useEffect(() => {
    window.location.replace(to);
  }, [to]);
  return null;
}

/** Single sign-on, when the server has a provider configured (null: passwords only). */
function useSso() {
  const providers = useQuery({
    queryKey: ['auth-providers'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/v1/auth/providers/', { signal })),
    staleTime: Infinity,
  });
  return providers.data?.sso ?? null;
}

export function LoginPage() {
  const { t } = useTranslation();
  const [searchParams] = useSearchParams();
  const next = safeNextPath(searchParams.get('next'));
  const session = useSession();
  const login = useLogin();
  const sso = useSso();
  const ssoFailed = searchParams.get('sso') === 'failed';
  const errorMessage =
    useLoginErrorMessage(login.error) ?? (ssoFailed ? t('login.ssoFailed') : null);
  useDocumentTitle(t('login.title'));

  // Already signed in, or just signed in (useLogin writes the session into the cache).
  if (session.data) {
    return isServerPath(next) ? <ServerRedirect to={next} /> : <Navigate to={next} replace />;
  }

  return (
    <main className={styles.page}>
      <div className={styles.language}>
        <LanguageSwitch />
      </div>
      <div className={styles.column}>
        <div className={styles.brand}>
          <BrandMark size={44} />
          <div>
            <div className={styles.brandName}>
              {t('app.nameNative')} {t('app.name')}
            </div>
            <div className={styles.brandTagline}>{t('app.tagline')}</div>
          </div>
        </div>
        <Card className={styles.card}>
          <Typography.Title level={3} className={styles.title}>
            {t('login.title')}
          </Typography.Title>
          <Typography.Paragraph type="secondary">{t('login.subtitle')}</Typography.Paragraph>
          {errorMessage !== null && (
            <Alert type="error" showIcon title={errorMessage} className={styles.alert} />
          )}
          {sso !== null && (
            <>
              <Button
                type="primary"
                block
                size="large"
                href={`${sso.login_url}?next=${encodeURIComponent(next)}`}
              >
                {t('login.sso', { name: sso.name })}
              </Button>
              <Divider plain>{t('login.orPassword')}</Divider>
            </>
          )}
          <Form<LoginBody>
            name="login"
            layout="vertical"
            requiredMark={false}
            disabled={login.isPending}
            onFinish={(values) => {
              login.mutate(values);
            }}
          >
            <Form.Item
              label={t('login.username')}
              name="username"
              rules={[{ required: true, whitespace: true, message: t('login.usernameRequired') }]}
            >
              <Input prefix={<UserOutlined />} autoComplete="username" autoFocus size="large" />
            </Form.Item>
            <Form.Item
              label={t('login.password')}
              name="password"
              rules={[{ required: true, message: t('login.passwordRequired') }]}
            >
              <Input.Password
                prefix={<LockOutlined />}
                autoComplete="current-password"
                size="large"
              />
            </Form.Item>
            <Button
              type={sso === null ? 'primary' : 'default'}
              htmlType="submit"
              block
              size="large"
              loading={login.isPending}
            >
              {t('login.submit')}
            </Button>
          </Form>
        </Card>
        <Typography.Text type="secondary" className={styles.footer}>
          {t('login.footer')}
        </Typography.Text>
      </div>
    </main>
  );
}
