import 'i18next';
import type { en } from './en';

// Makes t('some.key') a compile error when the key does not exist in en.ts.
declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'translation';
    resources: { translation: typeof en };
  }
}
