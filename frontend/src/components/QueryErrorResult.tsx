import { Button, Result } from 'antd';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../lib/api';

interface Props {
  error: unknown;
  onRetry?: () => void;
  fullPage?: boolean;
}

/** The error state for anything loaded from the API, with a retry button. */
export function QueryErrorResult({ error, onRetry, fullPage = false }: Props) {
  const { t } = useTranslation();
  let subTitle: string;
  if (error instanceof ApiError) {
    // 502-504 come from a proxy in front of a backend that is down or restarting.
    if (
      error.status === 0 ||
      error.status === 502 ||
      error.status === 503 ||
      error.status === 504
    ) {
      subTitle = t('errors.network');
    } else if (error.status === 403) {
      subTitle = t('errors.forbidden');
    } else {
      subTitle = t('errors.server', { status: error.status });
    }
  } else {
    subTitle = t('errors.network');
  }
  return (
    <div role="alert" style={fullPage ? { paddingTop: '15vh' } : undefined}>
      <Result
        status="warning"
        title={t('errors.loadFailed')}
        subTitle={subTitle}
        extra={
          onRetry ? (
            <Button type="primary" onClick={onRetry}>
              {t('errors.retry')}
            </Button>
          ) : undefined
        }
      />
    </div>
  );
}
