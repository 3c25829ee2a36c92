import { Card, Result } from 'antd';
import { useTranslation } from 'react-i18next';

/** Shown on tenant pages to a user who works in no tenant (a platform admin, typically). */
export function NoTenantResult() {
  const { t } = useTranslation();
  return (
    <Card>
      <Result
        status="info"
        title={t('common.noTenantTitle')}
        subTitle={t('common.noTenantDescription')}
        data-testid="no-tenant"
      />
    </Card>
  );
}

/** Shown instead of a form a viewer could fill in but never submit. */
export function ReadOnlyResult() {
  const { t } = useTranslation();
  return (
    <Card>
      <Result
        status="403"
        title={t('common.readOnlyTitle')}
        subTitle={t('common.readOnlyDescription')}
        data-testid="read-only"
      />
    </Card>
  );
}
