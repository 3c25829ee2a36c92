import { describe, expect, it } from 'vitest';
import { POOLS } from '../test/fixtures';
import { poolOptions } from './poolOptions';

describe('pool options', () => {
  it('names a pool by itself unless another cluster has a pool of the same name', () => {
    const [train, infer] = POOLS;
    if (train === undefined || infer === undefined) throw new Error('fixture pools changed');
    const twin = { ...train, id: 9, cluster: 'sim-h800' };
    expect(poolOptions([train, infer, twin])).toEqual([
      { value: 1, label: 'sim-a800/a800-train' },
      { value: 2, label: 'ascend-infer' },
      { value: 9, label: 'sim-h800/a800-train' },
    ]);
    expect(poolOptions(undefined)).toEqual([]);
  });
});
