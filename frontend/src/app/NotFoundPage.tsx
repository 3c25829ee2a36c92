import { Button, Card, Result } from 'antd';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';

export function NotFoundPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  return (
    <Card>
      <Result
        status="404"
        title={t('errors.notFoundTitle')}
        subTitle={t('errors.notFoundDescription')}
        extra={
          <Button type="primary" onClick={() => void navigate('/overview')}>
            {t('comingSoon.back')}
          </Button>
        }
      />
    </Card>
  );
}
