import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type ApiError } from '../../lib/api';
import type { IdleFlag } from '../../lib/apiTypes';

const FLAGS = '/api/v1/tenants/{tenant}/governance/flags/';

export const governanceKeys = {
  all: (tenant: string) => ['governance', tenant] as const,
  unread: (tenant: string) => ['governance', tenant, 'unread'] as const,
  notices: (tenant: string) => ['governance', tenant, 'notices'] as const,
  jobFlag: (tenant: string, job: number) => ['governance', tenant, 'flag', job] as const,
  activeFlags: (tenant: string) => ['governance', tenant, 'activeFlags'] as const,
  policy: (tenant: string) => ['governance', tenant, 'policy'] as const,
};

/** How many of the caller's notices in the tenant are unread; polled for the header. */
export function useUnreadCount(tenant: string) {
  return useQuery({
    queryKey: governanceKeys.unread(tenant),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/governance/notifications/unread-count/', {
          params: { path: { tenant } },
          signal,
        }),
      ),
    refetchInterval: 30_000,
  });
}

/** The caller's newest notices (read or not); the inbox asks when it opens. */
export function useNotices(tenant: string) {
  return useQuery({
    queryKey: governanceKeys.notices(tenant),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/governance/notifications/', {
          params: { path: { tenant }, query: { page_size: 10 } },
          signal,
        }),
      ),
  });
}

/** Marks one notice read (`id`) or all of them (`'all'`). */
export function useMarkRead(tenant: string) {
  const client = useQueryClient();
  return useMutation<unknown, ApiError, number | 'all'>({
    mutationFn: (id) =>
      id === 'all'
        ? unwrap(
            api.POST('/api/v1/tenants/{tenant}/governance/notifications/read-all/', {
              params: { path: { tenant } },
            }),
          )
        : unwrap(
            api.POST('/api/v1/tenants/{tenant}/governance/notifications/{id}/read/', {
              params: { path: { tenant, id } },
            }),
          ),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: governanceKeys.unread(tenant) });
      void client.invalidateQueries({ queryKey: governanceKeys.notices(tenant) });
    },
  });
}

/** The job's idle flag, if the sweep ever flagged it (a job has at most one). */
export function useJobIdleFlag(tenant: string, job: number, live: boolean) {
  return useQuery({
    queryKey: governanceKeys.jobFlag(tenant, job),
    queryFn: async ({ signal }) => {
      const page = await unwrap(
        api.GET(FLAGS, { params: { path: { tenant }, query: { job } }, signal }),
      );
      return page.results[0] ?? null;
    },
    refetchInterval: live ? 30_000 : false,
  });
}

/** The tenant's pending idle stops (flags warned or kept running), by job id: one request
 * for a whole list page instead of one per job. */
export function useActiveIdleFlags(tenant: string) {
  return useQuery({
    queryKey: governanceKeys.activeFlags(tenant),
    queryFn: async ({ signal }) => {
      const page = await unwrap(
        api.GET(FLAGS, {
          params: { path: { tenant }, query: { state: ['warned', 'extended'], page_size: 500 } },
          signal,
        }),
      );
      return new Map(page.results.map((flag) => [flag.job, flag]));
    },
    refetchInterval: 30_000,
  });
}

/** The idle policy the sweep applies to the tenant (members read it). */
export function useTenantPolicy(tenant: string) {
  return useQuery({
    queryKey: governanceKeys.policy(tenant),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/governance/policy/', {
          params: { path: { tenant } },
          signal,
        }),
      ),
    staleTime: 60_000,
  });
}

export type FlagAnswer =
  | { flag: number; action: 'keep-running' }
  | {
      /** Undefined: the job has no warning yet, and is exempted before any. */
      flag: number | undefined;
      action: 'exempt';
      reason: string;
    };

/** The owner's answers to a warning: keep the job running a while longer, or exempt it. */
export function useFlagAction(tenant: string, job: number) {
  const client = useQueryClient();
  return useMutation<IdleFlag, ApiError, FlagAnswer>({
    mutationFn: (answer) =>
      answer.action === 'keep-running'
        ? unwrap(
            api.POST('/api/v1/tenants/{tenant}/governance/flags/{id}/keep-running/', {
              params: { path: { tenant, id: answer.flag } },
            }),
          )
        : answer.flag === undefined
          ? unwrap(
              api.POST('/api/v1/tenants/{tenant}/governance/flags/exempt-job/', {
                params: { path: { tenant } },
                body: { job, reason: answer.reason },
              }),
            )
          : unwrap(
              api.POST('/api/v1/tenants/{tenant}/governance/flags/{id}/exempt/', {
                params: { path: { tenant, id: answer.flag } },
                body: { reason: answer.reason },
              }),
            ),
    onSuccess: (flag) => {
      client.setQueryData(governanceKeys.jobFlag(tenant, job), flag);
      void client.invalidateQueries({ queryKey: governanceKeys.activeFlags(tenant) });
    },
  });
}
