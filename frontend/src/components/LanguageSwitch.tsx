import { GlobalOutlined } from '@ant-design/icons';
import { App, Segmented, Space } from 'antd';
import { useTranslation } from 'react-i18next';
import { useSaveProfile, useSession } from '../features/auth/api';
import { currentLanguage, type Language, setLanguage } from '../lib/i18n';

// Each language is named in itself, so a reader of either can find theirs.
const OPTIONS: { value: Language; label: string }[] = [
  { value: 'en', label: 'EN' },
  { value: 'zh', label: '中文' },
];

/** The console's language; for a signed-in user also the language of what the platform emails
 * them, so the choice is saved with their profile too. */
export function LanguageSwitch() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const user = useSession().data?.user;
  const save = useSaveProfile();
  const choose = (language: Language) => {
    void setLanguage(language);
    if (user && user.language !== language) {
      save.mutate(
        { language },
        { onError: () => void message.warning(t('settings.languageNotSaved')) },
      );
    }
  };
  return (
    <Space size={6}>
      <GlobalOutlined aria-hidden style={{ color: 'rgba(0,0,0,0.45)' }} />
      <Segmented<Language>
        aria-label={t('header.language')}
        size="small"
        options={OPTIONS}
        value={currentLanguage()}
        onChange={choose}
      />
    </Space>
  );
}
