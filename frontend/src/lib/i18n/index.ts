import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from './en';
import { zh } from './zh';

export const LANGUAGES = ['en', 'zh'] as const;
export type Language = (typeof LANGUAGES)[number];

export const DEFAULT_LANGUAGE: Language = 'en';
const STORAGE_KEY = 'zhisuan.language';

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

/** The language chosen earlier in this browser, if any. */
function chosenLanguage(): Language | null {
  try {
    const value = window.localStorage.getItem(STORAGE_KEY);
    return isLanguage(value) ? value : null;
  } catch {
    // Storage can be disabled (privacy modes); the default language still works.
    return null;
  }
}

/** The language chosen earlier in this browser, or English. */
export function storedLanguage(): Language {
  return chosenLanguage() ?? DEFAULT_LANGUAGE;
}

/** Whether this browser has a language chosen (else the signed-in user's, if they have one). */
export function hasStoredLanguage(): boolean {
  return chosenLanguage() !== null;
}

/** The cookie the server reads the language from: the API's errors, the notebook proxy's pages. */
export const LANGUAGE_COOKIE = 'zs_lang';

function applyDocumentLanguage(language: Language): void {
  document.documentElement.lang = language === 'zh' ? 'zh-CN' : 'en';
  document.cookie = `${LANGUAGE_COOKIE}=${language}; path=/; max-age=31536000; SameSite=Lax`;
}

export async function setLanguage(language: Language): Promise<void> {
  try {
    window.localStorage.setItem(STORAGE_KEY, language);
  } catch {
    // Not remembered across reloads, but the switch itself still works.
  }
  applyDocumentLanguage(language);
  await i18n.changeLanguage(language);
}

export function currentLanguage(): Language {
  return isLanguage(i18n.resolvedLanguage) ? i18n.resolvedLanguage : DEFAULT_LANGUAGE;
}

const initialLanguage = storedLanguage();
applyDocumentLanguage(initialLanguage);

// Resources are bundled, so initialisation is synchronous and the first render is translated.
void i18n.use(initReactI18next).init({
  resources: { en: { translation: en }, zh: { translation: zh } },
  lng: initialLanguage,
  fallbackLng: DEFAULT_LANGUAGE,
  supportedLngs: LANGUAGES,
  initAsync: false,
  interpolation: { escapeValue: false }, // React escapes already.
  returnNull: false,
});

export { i18n };
