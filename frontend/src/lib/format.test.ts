import { describe, expect, it } from 'vitest';
import { formatDuration } from './format';

describe('durations in the reader’s language', () => {
  it('says hours and minutes as words, zero parts left out', () => {
    expect(formatDuration(7200, 'en')).toBe('2 h');
    expect(formatDuration(7200, 'zh')).toBe('2小时');
    expect(formatDuration(1800, 'zh')).toBe('30分钟');
    expect(formatDuration(5400, 'en')).toBe('1 h 30 min');
    expect(formatDuration(5400, 'zh')).toBe('1小时30分钟');
    expect(formatDuration(90_061, 'en')).toBe('1 d 1 h');
    expect(formatDuration(45, 'zh')).toBe('45秒');
    expect(formatDuration(0, 'en')).toBe('0 s');
  });
});
