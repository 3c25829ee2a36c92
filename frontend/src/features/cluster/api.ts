import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../lib/api';
import { poolKeys } from '../../lib/queryKeys';

/** A pool's topology with what each node holds; the scheduler changes it every few seconds. */
export function usePoolTopology(id: number | null) {
  return useQuery({
    queryKey: poolKeys.topology(id ?? 0),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/pools/{id}/topology/', { params: { path: { id: id ?? 0 } }, signal }),
      ),
    enabled: id !== null,
    refetchInterval: 10_000,
  });
}
