import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { components } from '../../api/schema';
import { api, unwrap, type ApiError } from '../../lib/api';
import type { AlertReceiver, FaultRule, NodeToken, ProbeRun } from '../../lib/apiTypes';

// The operator console's settings: the fault catalogue, alert receivers, node agent tokens
// and slow-node probe runs (platform admins only; the server answers 403 to anyone else).

/** Catalogues an operator edits by hand: tens of rows, read in one page. */
const CATALOGUE_PAGE = 500;
/** Tokens and probe runs grow with the fleet and with time: a page at a time. */
const LIST_PAGE = 50;

const keys = {
  rules: ['health', 'rules'] as const,
  receivers: ['health', 'receivers'] as const,
  tokens: ['health', 'node-tokens'] as const,
  probes: ['health', 'probe-runs'] as const,
};

export type RuleValues = components['schemas']['FaultRuleRequest'];
export type ReceiverValues = components['schemas']['AlertReceiverRequest'];

export function useRules() {
  return useQuery({
    queryKey: keys.rules,
    queryFn: async ({ signal }) =>
      (
        await unwrap(
          api.GET('/api/v1/health/rules/', {
            params: { query: { page_size: CATALOGUE_PAGE } },
            signal,
          }),
        )
      ).results,
  });
}

/** Create (`id` undefined) or change a rule. */
export function useSaveRule() {
  const client = useQueryClient();
  return useMutation<FaultRule, ApiError, RuleValues & { id?: number }>({
    mutationFn: ({ id, ...body }) =>
      unwrap(
        id === undefined
          ? api.POST('/api/v1/health/rules/', { body })
          : api.PATCH('/api/v1/health/rules/{id}/', { params: { path: { id } }, body }),
      ),
    onSuccess: () => void client.invalidateQueries({ queryKey: keys.rules }),
  });
}

export function useDeleteRule() {
  const client = useQueryClient();
  return useMutation<unknown, ApiError, number>({
    mutationFn: (id) =>
      unwrap(api.DELETE('/api/v1/health/rules/{id}/', { params: { path: { id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: keys.rules }),
  });
}

export function useReceivers() {
  return useQuery({
    queryKey: keys.receivers,
    queryFn: async ({ signal }) =>
      (
        await unwrap(
          api.GET('/api/v1/health/receivers/', {
            params: { query: { page_size: CATALOGUE_PAGE } },
            signal,
          }),
        )
      ).results,
  });
}

/** Create (`id` undefined) or change a receiver. */
export function useSaveReceiver() {
  const client = useQueryClient();
  return useMutation<AlertReceiver, ApiError, ReceiverValues & { id?: number }>({
    mutationFn: ({ id, ...body }) =>
      unwrap(
        id === undefined
          ? api.POST('/api/v1/health/receivers/', { body })
          : api.PATCH('/api/v1/health/receivers/{id}/', { params: { path: { id } }, body }),
      ),
    onSuccess: () => void client.invalidateQueries({ queryKey: keys.receivers }),
  });
}

export function useDeleteReceiver() {
  const client = useQueryClient();
  return useMutation<unknown, ApiError, number>({
    mutationFn: (id) =>
      unwrap(api.DELETE('/api/v1/health/receivers/{id}/', { params: { path: { id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: keys.receivers }),
  });
}

export interface TokenFilters {
  /** Part of a node's name, any case; '' for every node. */
  nodeName: string;
  /** Only tokens still valid (not revoked). */
  activeOnly: boolean;
}

export function useNodeTokens(filters: TokenFilters, cursor: string | undefined) {
  return useQuery({
    queryKey: [...keys.tokens, { ...filters, cursor }],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/health/node-tokens/', {
          params: {
            query: {
              page_size: LIST_PAGE,
              cursor,
              node_name: filters.nodeName || undefined,
              active: filters.activeOnly ? true : undefined,
            },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

/** Mint a token for one node: the answer carries the plaintext, never shown again. */
export function useMintToken() {
  const client = useQueryClient();
  return useMutation<NodeToken, ApiError, number>({
    mutationFn: (node) => unwrap(api.POST('/api/v1/health/node-tokens/', { body: { node } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: keys.tokens }),
  });
}

export function useRevokeToken() {
  const client = useQueryClient();
  return useMutation<unknown, ApiError, number>({
    mutationFn: (id) =>
      unwrap(api.DELETE('/api/v1/health/node-tokens/{id}/', { params: { path: { id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: keys.tokens }),
  });
}

/** Nodes whose name contains `name`, for picking the node a token is minted for. */
export function useNodeSearch(name: string) {
  return useQuery({
    queryKey: ['health', 'nodes', 'search', name],
    queryFn: async ({ signal }) =>
      (
        await unwrap(
          api.GET('/api/v1/health/nodes/', {
            params: { query: { name: name || undefined, page_size: 20 } },
            signal,
          }),
        )
      ).results,
    placeholderData: keepPreviousData,
  });
}

function unfinished(run: ProbeRun): boolean {
  return run.state === 'pending' || run.state === 'running';
}

/** Probe runs, newest first; polled while one on the page has not finished. */
export function useProbeRuns(cursor: string | undefined) {
  return useQuery({
    queryKey: [...keys.probes, { cursor }],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/health/probe-runs/', {
          params: { query: { page_size: LIST_PAGE, cursor } },
          signal,
        }),
      ),
    refetchInterval: (query) => (query.state.data?.results.some(unfinished) ? 3_000 : false),
  });
}

export function useStartProbe() {
  const client = useQueryClient();
  return useMutation<ProbeRun, ApiError, number>({
    mutationFn: (pool) => unwrap(api.POST('/api/v1/health/probe-runs/', { body: { pool } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: keys.probes }),
  });
}
