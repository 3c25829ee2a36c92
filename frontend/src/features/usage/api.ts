import { keepPreviousData, useQueries, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../lib/api';
import type { Bucket, GroupBy, Scope, UsageRow } from './usageData';

export interface UsageQuery {
  scope: Scope;
  tenant: string | null;
  groupBy: GroupBy;
}

function fetchUsage(
  q: UsageQuery,
  start: Date,
  end: Date,
  signal: AbortSignal,
): Promise<UsageRow[]> {
  const query = { group_by: q.groupBy, start: start.toISOString(), end: end.toISOString() };
  if (q.scope === 'platform' || q.tenant === null) {
    return unwrap(api.GET('/api/v1/usage/', { params: { query }, signal }));
  }
  return unwrap(
    api.GET('/api/v1/tenants/{tenant}/usage/', {
      params: { path: { tenant: q.tenant }, query },
      signal,
    }),
  );
}

const usageKey = (q: UsageQuery, start: Date, end: Date) =>
  ['usage', q.scope, q.tenant, q.groupBy, start.toISOString(), end.toISOString()] as const;

/** The report over the whole range: the table and the CSV agree with it exactly. */
export function useUsage(q: UsageQuery, start: Date, end: Date) {
  return useQuery({
    queryKey: usageKey(q, start, end),
    queryFn: ({ signal }) => fetchUsage(q, start, end, signal),
    placeholderData: keepPreviousData,
    staleTime: 60_000,
  });
}

/** One report per bucket: the API groups but does not bin by time, so the chart asks per bar. */
export function useUsageOverTime(q: UsageQuery, bins: Bucket[]) {
  return useQueries({
    queries: bins.map((b) => ({
      queryKey: usageKey(q, b.start, b.end),
      queryFn: ({ signal }: { signal: AbortSignal }) => fetchUsage(q, b.start, b.end, signal),
      staleTime: 60_000,
    })),
  });
}
