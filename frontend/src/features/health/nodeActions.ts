import { useMutation, useQueryClient } from '@tanstack/react-query';
import { App } from 'antd';
import { useTranslation } from 'react-i18next';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { Incident, NodeHealth } from '../../lib/apiTypes';
import { healthKeys } from '../../lib/queryKeys';

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

/**
 * Maintenance drain: cordon the node and restart its jobs elsewhere from their newest
 * checkpoint (the server records a closed `drain` incident with the jobs it hit).
 */
export function useDrain() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const client = useQueryClient();
  return useMutation<NodeHealth, ApiError, NodeHealth>({
    mutationFn: (node) =>
      unwrap(api.POST('/api/v1/health/nodes/{id}/drain/', { params: { path: { id: node.id } } })),
    onSuccess: (node) => {
      void message.success(t('health.drainDone', { node: node.name }));
      void client.invalidateQueries({ queryKey: healthKeys.all });
    },
    onError: (e) => void message.error(e.detail),
  });
}

/** After repair: close the incident; the server uncordons the node once nothing holds it. */
export function useResolveIncident() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const client = useQueryClient();
  return useMutation<Incident, ApiError, Incident>({
    mutationFn: (incident) =>
      unwrap(
        api.POST('/api/v1/health/incidents/{id}/resolve/', {
          params: { path: { id: incident.id } },
        }),
      ),
    onSuccess: (incident) => {
      void message.success(t('health.resolveDone', { fault: incident.fault }));
      // The node may be back in service and its alerts resolved: refresh every health view.
      void client.invalidateQueries({ queryKey: healthKeys.all });
    },
    onError: (e) => void message.error(e.detail),
  });
}
