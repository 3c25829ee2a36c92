import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../lib/api';

export const overviewQueryKey = ['overview'] as const;

export function useOverview() {
  return useQuery({
    queryKey: overviewQueryKey,
    queryFn: ({ signal }) => unwrap(api.GET('/api/v1/overview/', { signal })),
    // Headline numbers: cheap to fetch, worth keeping fresh while the page is open.
    refetchInterval: 30_000,
  });
}
