import { Button, Card, Result } from 'antd';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { useDocumentTitle } from '../lib/useDocumentTitle';
import { navLabel, type NavKey } from './nav';

/** Stands in for a product area that is not built yet, so the navigation never breaks. */
export function ComingSoonPage({ area }: { area: NavKey }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const name = navLabel(t, area);
  useDocumentTitle(name);
  return (
    <Card>
      <Result
        status="info"
        title={t('comingSoon.title', { area: name })}
        subTitle={t('comingSoon.description')}
        extra={
          <Button type="primary" onClick={() => void navigate('/overview')}>
            {t('comingSoon.back')}
          </Button>
        }
      />
    </Card>
  );
}
