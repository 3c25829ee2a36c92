import { useQuery } from '@tanstack/react-query';
import type { paths } from '../../api/schema';
import { api, unwrap } from '../../lib/api';

export type JobLogs =
  paths['/api/v1/tenants/{tenant}/jobs/{id}/logs/']['get']['responses'][200]['content']['application/json'];
export type JobLogLine = JobLogs['lines'][number];

export const TAIL_CHOICES = [200, 500, 2000] as const;
export const LOG_POLL_MS = 3000;

/** The last `tail` lines of a job's logs, polled every 3 s while `live`. */
export function useJobLogs(tenant: string, id: number, tail: number, live: boolean) {
  return useQuery({
    queryKey: ['jobs', tenant, 'logs', id, tail] as const,
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/jobs/{id}/logs/', {
          params: { path: { tenant, id }, query: { tail } },
          signal,
        }),
      ),
    refetchInterval: live ? LOG_POLL_MS : false,
    // Keep showing the last lines while the next poll is in flight.
    placeholderData: (previous) => previous,
  });
}
