import { GlobalOutlined } from '@ant-design/icons';
import { Segmented, Space } from 'antd';
import { useTranslation } from 'react-i18next';
import { currentLanguage, type Language, setLanguage } from '../lib/i18n';

// Each language is named in itself, so a reader of either can find theirs.
const OPTIONS: { value: Language; label: string }[] = [
  { value: 'en', label: 'EN' },
  { value: 'zh', label: '中文' },
];

export function LanguageSwitch() {
  const { t } = useTranslation();
  return (
    <Space size={6}>
      <GlobalOutlined aria-hidden style={{ color: 'rgba(0,0,0,0.45)' }} />
      <Segmented<Language>
        aria-label={t('header.language')}
        size="small"
        options={OPTIONS}
        value={currentLanguage()}
        onChange={(language) => void setLanguage(language)}
      />
    </Space>
  );
}
