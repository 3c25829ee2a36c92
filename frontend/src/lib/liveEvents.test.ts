import { QueryClient } from '@tanstack/react-query';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { POOL_REFRESH_MS, PoolRefresher } from './liveEvents';

const changed = (...ids: unknown[]) => ({ type: 'pools.changed', topic: 'pools', data: { ids } });

describe('PoolRefresher', () => {
  let client: QueryClient;
  let refreshed: unknown[][];

  beforeEach(() => {
    vi.useFakeTimers();
    client = new QueryClient();
    refreshed = [];
    vi.spyOn(client, 'invalidateQueries').mockImplementation((filters) => {
      refreshed.push([...(filters?.queryKey ?? [])]);
      return Promise.resolve();
    });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("refetches a changed pool's queries at once, then at most once per gap", () => {
    const pools = new PoolRefresher(client);
    pools.receive(changed(1, 2));
    expect(refreshed).toEqual([
      ['pools', 1],
      ['pools', 2],
    ]);
    // Three more changes of pool 1 inside the gap: one refetch, at the gap's end.
    pools.receive(changed(1));
    vi.advanceTimersByTime(500);
    pools.receive(changed(1));
    pools.receive(changed(1));
    expect(refreshed).toHaveLength(2);
    vi.advanceTimersByTime(POOL_REFRESH_MS - 500 - 1);
    expect(refreshed).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(refreshed.at(-1)).toEqual(['pools', 1]);
    expect(refreshed).toHaveLength(3);
    // Long after: at once again.
    vi.advanceTimersByTime(10 * POOL_REFRESH_MS);
    pools.receive(changed(2));
    expect(refreshed.at(-1)).toEqual(['pools', 2]);
    expect(refreshed).toHaveLength(4);
  });

  it('ignores other events and malformed ids, and drops waiting refetches when stopped', () => {
    const pools = new PoolRefresher(client);
    pools.receive({ type: 'job.updated', topic: 'tenant:vision', data: { id: 3 } });
    pools.receive({ type: 'pools.changed', topic: 'pools', data: { ids: 'all' } });
    pools.receive(changed('7', null, 4));
    expect(refreshed).toEqual([['pools', 4]]);
    pools.receive(changed(4));
    pools.stop();
    vi.advanceTimersByTime(10 * POOL_REFRESH_MS);
    expect(refreshed).toHaveLength(1);
  });
});
