import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type ApiError } from '../../lib/api';
import type { Project } from '../../lib/apiTypes';

const PROJECTS = '/api/v1/tenants/{tenant}/projects/';
export interface ProjectValues {
  name: string;
  description?: string;
}

const projectKeys = { all: (tenant: string) => ['projects', tenant] as const };
/** A tenant has a handful of projects (teams' workstreams), not thousands: one page. */
const PAGE = 500;

/** The tenant's projects, by name. */
export function useProjects(tenant: string) {
  return useQuery({
    queryKey: projectKeys.all(tenant),
    queryFn: async ({ signal }) => {
      const page = await unwrap(
        api.GET(PROJECTS, { params: { path: { tenant }, query: { page_size: PAGE } }, signal }),
      );
      return [...page.results].sort((a, b) => a.name.localeCompare(b.name));
    },
    staleTime: 60_000,
  });
}

/** Create (`id` undefined), rename or describe (`id` set) a project. */
export function useSaveProject(tenant: string) {
  const client = useQueryClient();
  return useMutation<Project, ApiError, ProjectValues & { id?: number }>({
    mutationFn: ({ id, name, description }) => {
      const body = { name: name.trim(), description: (description ?? '').trim() };
      return id === undefined
        ? unwrap(api.POST(PROJECTS, { params: { path: { tenant } }, body }))
        : unwrap(
            api.PATCH('/api/v1/tenants/{tenant}/projects/{id}/', {
              params: { path: { tenant, id } },
              body,
            }),
          );
    },
    onSuccess: () => void client.invalidateQueries({ queryKey: projectKeys.all(tenant) }),
  });
}

/** Delete a project; its jobs keep running and lose the label (the server sets it null). */
export function useDeleteProject(tenant: string) {
  const client = useQueryClient();
  return useMutation<unknown, ApiError, number>({
    mutationFn: (id) =>
      unwrap(
        api.DELETE('/api/v1/tenants/{tenant}/projects/{id}/', { params: { path: { tenant, id } } }),
      ),
    onSuccess: () => void client.invalidateQueries({ queryKey: projectKeys.all(tenant) }),
  });
}
