import { describe, expect, it } from 'vitest';
import { outageBands } from './whatIfRows';

describe('outageBands', () => {
  it('joins overlapping and touching outages, in time order', () => {
    expect(
      outageBands([
        { start_h: 30, end_h: 44 },
        { start_h: 9, end_h: 15 },
        { start_h: 12, end_h: 13 },
        { start_h: 15, end_h: 16 },
        { start_h: 40, end_h: 50 },
      ]),
    ).toEqual([
      { start_h: 9, end_h: 16 },
      { start_h: 30, end_h: 50 },
    ]);
  });

  it('has no band without outages', () => {
    expect(outageBands([])).toEqual([]);
  });
});
