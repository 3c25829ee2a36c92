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

function dateTime(iso: string, language: Language, seconds: boolean): string {
  return new Intl.DateTimeFormat(LOCALES[language], {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    ...(seconds ? { second: '2-digit' } : {}),
    hour12: false,
  }).format(new Date(iso));
}

export function formatDateTime(iso: string | null | undefined, language: Language): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  return dateTime(iso, language, true);
}

/** A moment to the minute ("12/06/2026, 15:24"): for times that are estimates. */
export function formatMinute(iso: string, language: Language): string {
  return dateTime(iso, language, false);
}

const DURATION_UNITS: Record<
  Language,
  { d: string; h: string; m: string; s: string; join: string }
> = {
  en: { d: ' d', h: ' h', m: ' min', s: ' s', join: ' ' },
  zh: { d: '天', h: '小时', m: '分钟', s: '秒', join: '' },
};

/**
 * A duration in the reader's language, its two largest units, zero parts left out:
 * "2 h", "1 h 30 min", "45 s" / "2小时", "1小时30分钟", "45秒" (not "2h 0m").
 */
export function formatDuration(seconds: number, language: Language): string {
  const u = DURATION_UNITS[language];
  let left = Math.max(0, Math.round(seconds));
  const parts: [number, string][] = [];
  for (const [size, unit] of [
    [86_400, u.d],
    [3600, u.h],
    [60, u.m],
    [1, u.s],
  ] as const) {
    parts.push([Math.floor(left / size), unit]);
    left %= size;
  }
  const first = parts.findIndex(([n]) => n > 0);
  if (first === -1) return `0${u.s}`;
  return parts
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n}${unit}`)
    .join(u.join);
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
