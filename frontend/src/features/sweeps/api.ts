import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { SweepCreated, SweepDetail, SweepState, SweepSubmit } from '../../lib/apiTypes';
import { jobKeys } from '../../lib/queryKeys';

export const sweepKeys = {
  all: (tenant: string) => ['sweeps', tenant] as const,
  lists: (tenant: string) => ['sweeps', tenant, 'list'] as const,
  list: (tenant: string, filters: object) => ['sweeps', tenant, 'list', filters] as const,
  detail: (tenant: string, id: number) => ['sweeps', tenant, 'detail', id] as const,
};

export interface SweepFilters {
  state?: SweepState;
}

export const SWEEPS_PAGE = 50;

/** How often a running sweep is read again: its trials start, end and report values with no
 * live event of their own. */
export const RUNNING_REFETCH_MS = 5_000;

/** One page of the tenant's sweeps, newest first: `cursor` undefined for the first. */
export function useSweeps(tenant: string, filters: SweepFilters, cursor: string | undefined) {
  return useQuery({
    queryKey: sweepKeys.list(tenant, { ...filters, cursor }),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/sweeps/', {
          params: { path: { tenant }, query: { ...filters, page_size: SWEEPS_PAGE, cursor } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
    // Progress and best values move while any sweep on the page runs.
    refetchInterval: (query) =>
      query.state.data?.results.some((s) => s.state === 'running') ? 15_000 : false,
  });
}

/** A sweep with every trial's result, read again every few seconds while it runs. */
export function useSweep(tenant: string, id: number) {
  return useQuery({
    queryKey: sweepKeys.detail(tenant, id),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/sweeps/{id}/', {
          params: { path: { tenant, id } },
          signal,
        }),
      ),
    refetchInterval: (query) =>
      query.state.data?.state === 'running' ? RUNNING_REFETCH_MS : false,
  });
}

/**
 * Submits a sweep file's sweep in one request: the server draws its trials and queues the
 * first of them, or refuses the whole sweep (a 400 says why by field: `parameters.<name>`,
 * `template.<job field>`, `trials`...). The fields are the file's, as written.
 */
export function useSubmitSweep(tenant: string) {
  const client = useQueryClient();
  return useMutation<SweepCreated, ApiError, Record<string, unknown>>({
    mutationFn: (body) =>
      unwrap(
        api.POST('/api/v1/tenants/{tenant}/sweeps/', {
          params: { path: { tenant } },
          body: body as unknown as SweepSubmit,
        }),
      ),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: sweepKeys.lists(tenant) });
      void client.invalidateQueries({ queryKey: jobKeys.lists(tenant) });
    },
  });
}

/** Cancels a sweep: no more trials start, and its queued and running ones are cancelled. */
export function useCancelSweep(tenant: string) {
  const client = useQueryClient();
  return useMutation<SweepDetail, ApiError, number>({
    mutationFn: (id) =>
      unwrap(
        api.POST('/api/v1/tenants/{tenant}/sweeps/{id}/cancel/', {
          params: { path: { tenant, id } },
        }),
      ),
    onSuccess: (sweep) => {
      client.setQueryData(sweepKeys.detail(tenant, sweep.id), sweep);
      void client.invalidateQueries({ queryKey: sweepKeys.lists(tenant) });
      void client.invalidateQueries({ queryKey: jobKeys.all(tenant) });
    },
  });
}
