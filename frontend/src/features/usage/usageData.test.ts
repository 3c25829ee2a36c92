import { describe, expect, it } from 'vitest';
import { bucketCost, buckets, csvUrl, MAX_BUCKETS, stackSeries } from './usageData';

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
});
