import { keepPreviousData, useQueries, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../lib/api';
import type { paths } from '../../api/schema';

type RunsPath = paths['/api/v1/tenants/{tenant}/runs/']['get'];
type RunPage = RunsPath['responses'][200]['content']['application/json'];
export type Run = RunPage['results'][number];
export type MetricKey = Run['keys'][number];
export type SeriesResponse =
  paths['/api/v1/tenants/{tenant}/runs/{id}/metrics/']['get']['responses'][200]['content']['application/json'];
export type Series = SeriesResponse['series'][string];
type CheckpointAnswer =
  paths['/api/v1/tenants/{tenant}/runs/{id}/checkpoints/']['get']['responses'][200]['content']['application/json'];
export type Checkpoint = CheckpointAnswer[number];

/** The read parameters of `/runs/{id}/metrics/`: which series, which steps, how many points. */
export interface SeriesQuery {
  keys: string[];
  maxPoints: number;
  stepMin?: number;
  stepMax?: number;
}

export const runKeys = {
  all: (tenant: string) => ['runs', tenant] as const,
  list: (tenant: string, filters: object) => ['runs', tenant, 'list', filters] as const,
  detail: (tenant: string, id: number) => ['runs', tenant, 'detail', id] as const,
  metrics: (tenant: string, id: number, query: SeriesQuery) =>
    ['runs', tenant, 'metrics', id, query] as const,
  checkpoints: (tenant: string, id: number) => ['runs', tenant, 'checkpoints', id] as const,
};

export interface RunFilters {
  state?: Run['state'];
  /** Part of the name, any case. */
  name?: string;
}

export const RUNS_PAGE = 50;

/** One page of the tenant's runs, newest first: `cursor` undefined for the first. */
export function useRuns(tenant: string, filters: RunFilters, cursor: string | undefined) {
  return useQuery({
    queryKey: runKeys.list(tenant, { ...filters, cursor }),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/runs/', {
          params: {
            path: { tenant },
            query: { page_size: RUNS_PAGE, ...filters, cursor },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: 15_000,
  });
}

function fetchRun(tenant: string, id: number, signal: AbortSignal) {
  return unwrap(
    api.GET('/api/v1/tenants/{tenant}/runs/{id}/', { params: { path: { tenant, id } }, signal }),
  );
}

export function useRun(tenant: string, id: number) {
  return useQuery({
    queryKey: runKeys.detail(tenant, id),
    queryFn: ({ signal }) => fetchRun(tenant, id, signal),
    refetchInterval: 15_000,
  });
}

/** Each of `ids` by id: a deep link can name runs that are not on the first list page. */
export function useRunsById(tenant: string, ids: number[]) {
  return useQueries({
    queries: ids.map((id) => ({
      queryKey: runKeys.detail(tenant, id),
      queryFn: ({ signal }: { signal: AbortSignal }) => fetchRun(tenant, id, signal),
    })),
  });
}

/** The run of a job (a job has at most one), or null when the job reported no metrics. */
export function useJobRun(tenant: string, jobId: number, live: boolean) {
  return useQuery({
    queryKey: runKeys.list(tenant, { job: jobId }),
    queryFn: async ({ signal }) => {
      const page = await unwrap(
        api.GET('/api/v1/tenants/{tenant}/runs/', {
          params: { path: { tenant }, query: { job: jobId, page_size: 1 } },
          signal,
        }),
      );
      return page.results[0] ?? null;
    },
    refetchInterval: live ? 10_000 : false,
  });
}

function fetchSeries(tenant: string, id: number, query: SeriesQuery, signal: AbortSignal) {
  return unwrap(
    api.GET('/api/v1/tenants/{tenant}/runs/{id}/metrics/', {
      params: {
        path: { tenant, id },
        query: {
          keys: query.keys.join(','),
          max_points: query.maxPoints,
          ...(query.stepMin === undefined ? {} : { step_min: query.stepMin }),
          ...(query.stepMax === undefined ? {} : { step_max: query.stepMax }),
        },
      },
      signal,
    }),
  );
}

export function useRunSeries(tenant: string, id: number | null, query: SeriesQuery, live: boolean) {
  return useQuery({
    queryKey: runKeys.metrics(tenant, id ?? 0, query),
    queryFn: ({ signal }) => fetchSeries(tenant, id ?? 0, query, signal),
    enabled: id !== null && query.keys.length > 0,
    placeholderData: keepPreviousData,
    refetchInterval: live ? 10_000 : false,
  });
}

/** The same series query for several runs (the comparison's overlay). */
export function useRunsSeries(tenant: string, ids: number[], query: SeriesQuery) {
  return useQueries({
    queries: ids.map((id) => ({
      queryKey: runKeys.metrics(tenant, id, query),
      queryFn: ({ signal }: { signal: AbortSignal }) => fetchSeries(tenant, id, query, signal),
      enabled: query.keys.length > 0,
    })),
  });
}

export function useCheckpoints(tenant: string, id: number | null, live: boolean) {
  return useQuery({
    queryKey: runKeys.checkpoints(tenant, id ?? 0),
    queryFn: ({ signal }): Promise<Checkpoint[]> =>
      // A plain list (newest step first, capped), as the schema now says.
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/runs/{id}/checkpoints/', {
          params: { path: { tenant, id: id ?? 0 } },
          signal,
        }),
      ),
    enabled: id !== null,
    refetchInterval: live ? 15_000 : false,
  });
}
