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

export function formatDateTime(iso: string | null | undefined, language: Language): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  return new Intl.DateTimeFormat(LOCALES[language], {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  }).format(new Date(iso));
}

/** A compact duration: 45s, 12m 5s, 3h 20m, 2d 4h. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** An amount in `currency` (ISO 4217), e.g. "¥1,234.50" or "CN¥1,234.50" by locale. */
export function formatMoney(
  value: number,
  language: Language,
  currency: string,
  digits = 2,
): string {
  return new Intl.NumberFormat(LOCALES[language], {
    style: 'currency',
    currency,
    minimumFractionDigits: Math.min(2, digits),
    maximumFractionDigits: digits,
  }).format(value);
}

export function formatNumber(value: number, language: Language, digits = 1): string {
  return new Intl.NumberFormat(LOCALES[language], { maximumFractionDigits: digits }).format(value);
}
