import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type ApiError, unwrap } from '../../lib/api';
import type { InferenceService, InferenceServicePatch } from '../../lib/apiTypes';

/** How many of a service's newest revisions its page lists. */
export const REVISIONS_PAGE = 50;

/** While a rollout runs (or is waiting, or finishing), the page re-reads as often as the
 * service itself, so the revisions' states move with the rollout line. A failed one waits
 * for a person: nothing moves until then. */
export function rolloutRuns(service: InferenceService): boolean {
  return service.rollout_state !== '' && service.rollout_state !== 'failed';
}

/**
 * A service's revisions, newest first. The key holds what the service says of its rollout,
 * so a rollout that starts, ends or moves on (seen in the service's own refetch) reads the
 * revisions again at once rather than at the next tick.
 */
export function useServiceRevisions(tenant: string, service: InferenceService) {
  const path = { tenant, id: service.id };
  return useQuery({
    queryKey: [
      'inference',
      tenant,
      service.id,
      'revisions',
      {
        revision: service.revision,
        serving: service.serving_revision,
        rollout: service.rollout_state,
      },
    ],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/tenants/{tenant}/inference/services/{id}/revisions/', {
          params: { path, query: { page_size: REVISIONS_PAGE } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: rolloutRuns(service) ? 10_000 : false,
  });
}

/** What the update form may change: what the replicas run (image, model, port, probes), so
 * any change is a new revision, rolled out replica by replica. Only the changed fields are
 * sent. */
export type ModelChange = Partial<
  Pick<
    InferenceServicePatch,
    | 'runtime_image'
    | 'model_uri'
    | 'port'
    | 'readiness_path'
    | 'liveness_path'
    | 'probe_initial_delay_s'
    | 'probe_period_s'
  >
>;

/** After a new revision: the service (its rollout line), its revisions and the list. */
function useRefreshService(tenant: string) {
  const client = useQueryClient();
  return () => void client.invalidateQueries({ queryKey: ['inference', tenant] });
}

export function useUpdateModel(tenant: string, id: number) {
  const refresh = useRefreshService(tenant);
  return useMutation<InferenceService, ApiError, ModelChange>({
    mutationFn: (body) =>
      unwrap(
        api.PATCH('/api/v1/tenants/{tenant}/inference/services/{id}/', {
          params: { path: { tenant, id } },
          // Partial on purpose: the generated PATCH type asks for every field with a default.
          body: body as InferenceServicePatch,
        }),
      ),
    onSuccess: refresh,
  });
}

export function useRollback(tenant: string, id: number) {
  const refresh = useRefreshService(tenant);
  return useMutation<InferenceService, ApiError, number>({
    mutationFn: (revision) =>
      unwrap(
        api.POST('/api/v1/tenants/{tenant}/inference/services/{id}/rollback/', {
          params: { path: { tenant, id } },
          body: { revision },
        }),
      ),
    onSuccess: refresh,
  });
}
