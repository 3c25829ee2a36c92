import { describe, expect, it } from 'vitest';
import { changedFields } from './auditChanges';

describe('changedFields', () => {
  it('lists only the fields an update changed, in name order', () => {
    const entry = {
      before: { guarantee: 48, borrow_limit: 32, pool: 'a800', tags: ['a'] },
      after: { guarantee: 64, borrow_limit: 32, pool: 'a800', tags: ['a', 'b'] },
    };
    expect(changedFields(entry)).toEqual([
      { key: 'guarantee', before: '48', after: '64' },
      { key: 'tags', before: '["a"]', after: '["a","b"]' },
    ]);
  });

  it('lists every field of a create or a delete, with a dash for the missing side', () => {
    expect(changedFields({ before: null, after: { name: 'llama', priority: 4 } })).toEqual([
      { key: 'name', before: '—', after: 'llama' },
      { key: 'priority', before: '—', after: '4' },
    ]);
    expect(changedFields({ before: { name: 'llama' }, after: null })).toEqual([
      { key: 'name', before: 'llama', after: '—' },
    ]);
  });

  it('reads a state that is not an object as no fields', () => {
    expect(changedFields({ before: 'x', after: [1, 2] })).toEqual([]);
  });
});
