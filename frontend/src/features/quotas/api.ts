import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { Quota, QuotaPatch } from '../../lib/apiTypes';

export function useTenantQuotas(tenant: string | null) {
  return useQuery({
    queryKey: ['quotas', 'tenant', tenant],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/quotas/', {
          params: { path: { tenant: tenant ?? '' } },
          signal,
        }),
      ),
    enabled: tenant !== null,
  });
}

export function useAllQuotas(enabled: boolean) {
  return useQuery({
    queryKey: ['quotas', 'all'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/v1/quotas/', { signal })),
    enabled,
  });
}

export function usePatchQuota() {
  const client = useQueryClient();
  return useMutation<Quota, ApiError, { id: number; body: QuotaPatch }>({
    mutationFn: ({ id, body }) =>
      unwrap(api.PATCH('/api/v1/quotas/{id}/', { params: { path: { id } }, body })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['quotas'] }),
  });
}
