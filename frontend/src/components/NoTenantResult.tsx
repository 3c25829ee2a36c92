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
