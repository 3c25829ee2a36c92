import type { Language } from '../../lib/i18n';

const UNITS: Record<Language, { d: string; h: string; m: string; s: string; join: string }> = {
  en: { d: ' d', h: ' h', m: ' min', s: ' s', join: ' ' },
  zh: { d: '天', h: '小时', m: '分钟', s: '秒', join: '' },
};

/**
 * A duration in the reader's language, its two largest units, zero parts left out:
 * "2 h", "1 h 30 min", "45 s" / "2小时", "1小时30分钟", "45秒" (not "2h 0m").
 */
export function formatDurationIn(seconds: number, language: Language): string {
  const u = UNITS[language];
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
