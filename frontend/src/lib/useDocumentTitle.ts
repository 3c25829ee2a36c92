import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';

/** Sets the browser tab title to "<page> · Zhisuan" while the calling page is shown. */
export function useDocumentTitle(page: string): void {
  const { t } = useTranslation();
  const product = `${t('app.nameNative')} ${t('app.name')}`;
  useEffect(() => {
    document.title = page ? `${page} · ${product}` : product;
  }, [page, product]);
}
