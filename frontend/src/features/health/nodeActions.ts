import { useMutation, useQueryClient } from '@tanstack/react-query';
import { App } from 'antd';
import { useTranslation } from 'react-i18next';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { NodeHealth } from '../../lib/apiTypes';

// Every node query (the grid, a node page, its history) lives under this key, so one
// invalidation after an action refreshes whichever view is showing the node.
const NODES_KEY = ['health', 'nodes'] as const;

/** Cordon (no new work lands on the node) or put it back into service; audited server-side. */
export function useCordon() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const client = useQueryClient();
  return useMutation<NodeHealth, ApiError, { node: NodeHealth; cordon: boolean }>({
    mutationFn: ({ node, cordon }) =>
      unwrap(
        cordon
          ? api.POST('/api/v1/health/nodes/{id}/cordon/', { params: { path: { id: node.id } } })
          : api.POST('/api/v1/health/nodes/{id}/uncordon/', { params: { path: { id: node.id } } }),
      ),
    onSuccess: (node, { cordon }) => {
      void message.success(
        t(cordon ? 'health.cordonDone' : 'health.uncordonDone', { node: node.name }),
      );
      void client.invalidateQueries({ queryKey: NODES_KEY });
    },
    onError: (e) => void message.error(e.detail),
  });
}

/** Move an idle node into the pool's hot spares or back (the server refuses a busy node). */
export function useSpare() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const client = useQueryClient();
  return useMutation<NodeHealth, ApiError, { node: NodeHealth; spare: boolean }>({
    mutationFn: ({ node, spare }) =>
      unwrap(
        api.POST('/api/v1/health/nodes/{id}/spare/', {
          params: { path: { id: node.id } },
          body: { spare },
        }),
      ),
    onSuccess: (node, { spare }) => {
      void message.success(
        t(spare ? 'health.spareDone' : 'health.unspareDone', { node: node.name }),
      );
      void client.invalidateQueries({ queryKey: NODES_KEY });
    },
    onError: (e) => void message.error(e.detail),
  });
}
