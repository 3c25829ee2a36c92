import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { App as AntApp, ConfigProvider, type ThemeConfig } from 'antd';
import enUS from 'antd/locale/en_US';
import zhCN from 'antd/locale/zh_CN';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { currentLanguage } from '../lib/i18n';

const theme: ThemeConfig = {
  token: {
    colorPrimary: '#2f6fed',
    colorInfo: '#2f6fed',
    borderRadius: 8,
    colorBgLayout: '#f3f5f9',
    fontFamily: 'var(--zs-font-family)',
  },
  components: {
    Layout: { siderBg: '#0b1424', headerBg: '#ffffff' },
    Menu: {
      darkItemBg: 'transparent',
      darkItemSelectedBg: '#2f6fed',
      itemBorderRadius: 8,
      itemMarginInline: 0,
    },
    Card: { headerFontSize: 15 },
  },
};

export function AppProviders({
  queryClient,
  children,
}: {
  queryClient: QueryClient;
  children: ReactNode;
}) {
  // Subscribes to language changes so antd's own texts switch with ours.
  useTranslation();
  const locale = currentLanguage() === 'zh' ? zhCN : enUS;
  return (
    <QueryClientProvider client={queryClient}>
      <ConfigProvider locale={locale} theme={theme} button={{ autoInsertSpace: false }}>
        <AntApp>{children}</AntApp>
      </ConfigProvider>
    </QueryClientProvider>
  );
}
