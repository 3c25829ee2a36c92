import { describe, expect, it } from 'vitest';
import {
  bucketCost,
  bucketLabels,
  buckets,
  csvUrl,
  MAX_BUCKETS,
  rangeTooLong,
  stackSeries,
} from './usageData';

const day = (d: number) => new Date(Date.UTC(2026, 10, d));

describe('usage data', () => {
  it('splits a range into whole-day buckets, at most MAX_BUCKETS of them', () => {
    expect(buckets(day(1), day(4)).map((b) => b.start.getUTCDate())).toEqual([1, 2, 3]);
    const year = buckets(new Date(Date.UTC(2026, 0, 1)), new Date(Date.UTC(2027, 0, 1)));
    expect(year.length).toBeLessThanOrEqual(MAX_BUCKETS);
    // 365 days in buckets of 12 days: 31 buckets, the last one cut at the end.
    expect(year.length).toBe(31);
    expect(year.at(-1)?.end.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(buckets(day(4), day(4))).toEqual([]);
  });

  it('stacks the largest groups and folds the rest into Other', () => {
    const perBucket = [
      [
        { key: 'a', device_hours: 10, cost: '1.00' },
        { key: 'b', device_hours: 5, cost: '0.50' },
        { key: 'c', device_hours: 1, cost: '0.10' },
      ],
      [{ key: 'c', device_hours: 2, cost: '0.20' }],
    ];
    expect(stackSeries(perBucket, 2, 'Other')).toEqual([
      { name: 'a', data: [10, 0] },
      { name: 'b', data: [5, 0] },
      { name: 'Other', data: [1, 2] },
    ]);
    expect(bucketCost(perBucket[0] ?? [])).toBeCloseTo(1.6);
  });

  it('builds the CSV export URL of the same report', () => {
    expect(csvUrl('tenant', 'vision', 'pool', day(1), day(3))).toBe(
      '/api/v1/tenants/vision/usage/?group_by=pool&start=2026-11-01T00%3A00%3A00.000Z&end=2026-11-03T00%3A00%3A00.000Z&export=csv',
    );
    expect(csvUrl('platform', 'vision', 'tenant', day(1), day(3))).toMatch(
      /^\/api\/v1\/usage\/\?group_by=tenant&/,
    );
  });

  it('labels buckets by day, with the year when the range spans years', () => {
    const local = (y: number, m: number, d: number) => new Date(y, m - 1, d);
    expect(bucketLabels(buckets(local(2026, 11, 1), local(2026, 11, 3)))).toEqual([
      '11-01',
      '11-02',
    ]);
    const twoYears = bucketLabels(buckets(local(2024, 12, 12), local(2026, 12, 12)));
    expect(twoYears[0]).toBe('2024-12-12–2025-01-04');
    expect(twoYears.at(-1)?.startsWith('2026-')).toBe(true);
    expect(bucketLabels([])).toEqual([]);
  });

  it('knows the longest range the API reports on', () => {
    const local = (y: number, m: number, d: number) => new Date(y, m - 1, d);
    expect(rangeTooLong(local(2025, 1, 1), local(2026, 1, 2))).toBe(false); // 366 days
    expect(rangeTooLong(local(2025, 1, 1), local(2026, 1, 3))).toBe(true);
  });
});
