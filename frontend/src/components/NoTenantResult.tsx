import { Card, Result, type ResultProps } from 'antd';
import { useTranslation } from 'react-i18next';

/** A page's whole body when the user may not use it here: why, and what to do instead. */
export function NoticeResult({
  status,
  title,
  subTitle,
  testId,
}: {
  status: ResultProps['status'];
  title: string;
  subTitle: string;
  testId: string;
}) {
  return (
    <Card>
      <Result status={status} title={title} subTitle={subTitle} data-testid={testId} />
    </Card>
  );
}

/** Shown on tenant pages to a user who works in no tenant (a platform admin, typically). */
export function NoTenantResult() {
  const { t } = useTranslation();
  return (
    <NoticeResult
      status="info"
      title={t('common.noTenantTitle')}
      subTitle={t('common.noTenantDescription')}
      testId="no-tenant"
    />
  );
}

/** Shown instead of a form a viewer could fill in but never submit. */
export function ReadOnlyResult() {
  const { t } = useTranslation();
  return (
    <NoticeResult
      status="403"
      title={t('common.readOnlyTitle')}
      subTitle={t('common.readOnlyDescription')}
      testId="read-only"
    />
  );
}
