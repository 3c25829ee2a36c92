import type { Language } from './i18n';

const LOCALES: Record<Language, string> = { en: 'en-US', zh: 'zh-CN' };

export function formatInteger(value: number, language: Language): string {
  return new Intl.NumberFormat(LOCALES[language], { maximumFractionDigits: 0 }).format(value);
}

/** `part` of `total` as a percentage with one decimal; 0 when total is 0. */
export function formatShare(part: number, total: number, language: Language): string {
  const ratio = total > 0 ? part / total : 0;
  return new Intl.NumberFormat(LOCALES[language], {
    style: 'percent',
    maximumFractionDigits: 1,
  }).format(ratio);
}

export function formatClock(timestamp: number, language: Language): string {
  return new Intl.DateTimeFormat(LOCALES[language], {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).format(new Date(timestamp));
}
