import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../lib/api';
import { useConnectionState } from '../../lib/liveEvents';
import { poolKeys } from '../../lib/queryKeys';

/**
 * A pool's topology with what each node holds. The scheduler changes it every few seconds;
 * the events socket says when (`pools.changed`), so polling is only the fallback for when
 * the socket is down.
 */
export function usePoolTopology(id: number | null) {
  const live = useConnectionState() === 'open';
  return useQuery({
    queryKey: poolKeys.topology(id ?? 0),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/pools/{id}/topology/', { params: { path: { id: id ?? 0 } }, signal }),
      ),
    enabled: id !== null,
    refetchInterval: live ? 60_000 : 10_000,
  });
}
