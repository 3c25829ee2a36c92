import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type ApiError, unwrap } from '../../lib/api';
import type {
  CheckpointRequest,
  Job,
  JobEvent,
  JobKind,
  JobState,
  JobSubmit,
  PipelineQueued,
  PipelineSubmit,
} from '../../lib/apiTypes';
import { jobKeys, poolKeys } from '../../lib/queryKeys';
import { canFollow } from './helpers';

export interface JobFilters {
  state?: JobState;
  kind?: JobKind;
  pool?: number;
  priority?: number;
  /** Part of the name, any case. */
  name?: string;
  /** The submitter's username. */
  owner?: string;
}

export const JOBS_PAGE = 50;

/** One page of the tenant's jobs, newest first: `cursor` undefined for the first. */
export function useJobs(tenant: string, filters: JobFilters, cursor: string | undefined) {
  return useQuery({
    queryKey: jobKeys.list(tenant, { ...filters, cursor }),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/jobs/', {
          params: {
            path: { tenant },
            query: { ...filters, page_size: JOBS_PAGE, cursor },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

/** How many of the tenant's newest training jobs the submit form offers to start after. */
export const AFTER_CANDIDATES = 100;

/**
 * The training jobs a new job may start after: the tenant's newest, less those that failed or
 * were cancelled (they never succeed, so the server refuses them).
 */
export function useAfterCandidates(tenant: string) {
  const filters = { kind: 'training', page_size: AFTER_CANDIDATES } as const;
  return useQuery({
    queryKey: jobKeys.list(tenant, filters),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/jobs/', {
          params: { path: { tenant }, query: filters },
          signal,
        }),
      ),
    select: (data) => data.results.filter(canFollow),
  });
}

/** How often a queued job is read again: its pending reason changes with no event, and its
 * start forecast is refreshed about once a minute. */
export const QUEUED_REFETCH_MS = 30_000;

export function useJob(tenant: string, id: number) {
  return useQuery({
    queryKey: jobKeys.detail(tenant, id),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/jobs/{id}/', {
          params: { path: { tenant, id } },
          signal,
        }),
      ),
    refetchInterval: (query) => (query.state.data?.state === 'queued' ? QUEUED_REFETCH_MS : false),
  });
}

export function useJobEvents(tenant: string, id: number) {
  return useQuery({
    queryKey: jobKeys.events(tenant, id),
    queryFn: async ({ signal }) => {
      const events: JobEvent[] = await unwrap(
        api.GET('/api/v1/tenants/{tenant}/jobs/{id}/events/', {
          params: { path: { tenant, id } },
          signal,
        }),
      );
      return [...events].sort((a, b) => a.created_at.localeCompare(b.created_at));
    },
  });
}

/** What of a job its pipeline drawing shows too: its state and the jobs linked to it. */
function linksOf(job: Job): string {
  const states = (jobs: Job['after_jobs']) => jobs.map((j) => `${j.id}:${j.state}`).join(',');
  return `${job.state};${states(job.after_jobs)};${states(job.next_jobs)}`;
}

/**
 * The job and every job linked to it through `after`. Also keyed on what the job page reads of
 * those links, so a change it sees (its own polling, a live update) draws the pipeline again;
 * live updates of the tenant's jobs refetch it anyway (they invalidate every job query).
 */
export function usePipeline(tenant: string, job: Job) {
  return useQuery({
    queryKey: [...jobKeys.pipeline(tenant, job.id), linksOf(job)],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/jobs/{id}/pipeline/', {
          params: { path: { tenant, id: job.id } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

export function usePools() {
  return useQuery({
    queryKey: poolKeys.all,
    queryFn: ({ signal }) => unwrap(api.GET('/api/v1/pools/', { signal })),
    staleTime: 60_000,
  });
}

export function usePoolQueue(id: number | null) {
  return useQuery({
    queryKey: poolKeys.queue(id ?? 0),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/v1/pools/{id}/queue/', { params: { path: { id: id ?? 0 } }, signal })),
    enabled: id !== null,
    refetchInterval: 10_000,
  });
}

export function useSubmitJob(tenant: string) {
  const client = useQueryClient();
  return useMutation<Job, ApiError, JobSubmit>({
    mutationFn: (body) =>
      unwrap(api.POST('/api/v1/tenants/{tenant}/jobs/', { params: { path: { tenant } }, body })),
    onSuccess: (job) => {
      client.setQueryData(jobKeys.detail(tenant, job.id), job);
      void client.invalidateQueries({ queryKey: jobKeys.lists(tenant) });
    },
  });
}

/**
 * Submits a pipeline's steps in one request: the server queues all of them or none (a 400 says
 * each refused step's errors under `steps.<index>`). The steps are a file's, as written: the
 * server checks their fields.
 */
export function useSubmitPipeline(tenant: string) {
  const client = useQueryClient();
  return useMutation<PipelineQueued, ApiError, { steps: Record<string, unknown>[] }>({
    mutationFn: (body) =>
      unwrap(
        api.POST('/api/v1/tenants/{tenant}/jobs/pipeline/', {
          params: { path: { tenant } },
          body: body as unknown as PipelineSubmit,
        }),
      ),
    onSuccess: (answer) => {
      for (const job of answer.jobs) client.setQueryData(jobKeys.detail(tenant, job.id), job);
      void client.invalidateQueries({ queryKey: jobKeys.lists(tenant) });
    },
  });
}

/** What a job's owner (or a tenant admin) may do to it; restart and delete-home are for
 * notebooks: start a stopped one again with its files, or delete those files for good. */
export type JobAction = 'cancel' | 'clone' | 'restart' | 'delete-home';

function postAction(tenant: string, id: number, action: JobAction): Promise<Job> {
  const init = { params: { path: { tenant, id } } };
  switch (action) {
    case 'cancel':
      return unwrap(api.POST('/api/v1/tenants/{tenant}/jobs/{id}/cancel/', init));
    case 'clone':
      return unwrap(api.POST('/api/v1/tenants/{tenant}/jobs/{id}/clone/', init));
    case 'restart':
      return unwrap(api.POST('/api/v1/tenants/{tenant}/jobs/{id}/restart/', init));
    case 'delete-home':
      return unwrap(api.POST('/api/v1/tenants/{tenant}/jobs/{id}/delete-home/', init));
  }
}

/** The job the action answers with: the job itself, or the new one (clone, restart). */
export function useJobAction(tenant: string, action: JobAction) {
  const client = useQueryClient();
  return useMutation<Job, ApiError, number>({
    mutationFn: (id) => postAction(tenant, id, action),
    onSuccess: (job) => {
      client.setQueryData(jobKeys.detail(tenant, job.id), job);
      void client.invalidateQueries({ queryKey: jobKeys.all(tenant) });
    },
  });
}

const checkpointKey = (tenant: string, id: number) => ['jobs', tenant, 'checkpoint', id] as const;

/** The job's latest checkpoint request (served or pending) and its newest checkpoint. */
export function useCheckpointRequest(tenant: string, id: number, live: boolean) {
  return useQuery({
    queryKey: checkpointKey(tenant, id),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/jobs/{id}/checkpoint/', {
          params: { path: { tenant, id } },
          signal,
        }),
      ),
    // A pending request is served by the job's next checkpoint: look again while it runs.
    refetchInterval: live ? 10_000 : false,
  });
}

/** Ask a running training job to save a checkpoint soon. */
export function useRequestCheckpoint(tenant: string, id: number) {
  const client = useQueryClient();
  return useMutation<CheckpointRequest, ApiError>({
    mutationFn: () =>
      unwrap(
        api.POST('/api/v1/tenants/{tenant}/jobs/{id}/checkpoint/', {
          params: { path: { tenant, id } },
          body: {},
        }),
      ),
    onSuccess: (state) => {
      client.setQueryData(checkpointKey(tenant, id), state);
      void client.invalidateQueries({ queryKey: jobKeys.events(tenant, id) });
    },
  });
}
