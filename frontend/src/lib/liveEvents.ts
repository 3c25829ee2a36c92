import type { QueryClient } from '@tanstack/react-query';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore } from 'react';
import type { Job, JobPage } from './apiTypes';
import { EventStream, eventsUrl, type ConnectionState, type ServerEvent } from './events';
import { jobKeys, poolKeys } from './queryKeys';

// The connection state for the header indicator: one stream per signed-in shell.
let connection: ConnectionState = 'idle';
const listeners = new Set<() => void>();

function setConnection(state: ConnectionState): void {
  connection = state;
  listeners.forEach((listener) => {
    listener();
  });
}

export function useConnectionState(): ConnectionState {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => connection,
    () => connection,
  );
}

interface JobUpdate {
  id: number;
  state: Job['state'];
  reason?: string;
  message?: string;
}

function isJobUpdate(data: unknown): data is JobUpdate {
  return (
    typeof data === 'object' &&
    data !== null &&
    typeof (data as { id?: unknown }).id === 'number' &&
    typeof (data as { state?: unknown }).state === 'string'
  );
}

/**
 * Writes one server event into the query cache: the job's new state is patched in place
 * (detail and every cached list page) so the UI moves at once, then the affected queries
 * are invalidated so fields the event does not carry (allocations, timestamps) follow.
 */
export function applyEvent(client: QueryClient, tenant: string, event: ServerEvent): void {
  if (event.type !== 'job.updated' || !isJobUpdate(event.data)) return;
  const update = event.data;
  client.setQueryData<Job>(jobKeys.detail(tenant, update.id), (job) =>
    job ? { ...job, state: update.state, state_reason: update.message ?? job.state_reason } : job,
  );
  client.setQueriesData<JobPage>({ queryKey: jobKeys.lists(tenant) }, (page) =>
    page
      ? {
          ...page,
          results: page.results.map((job) =>
            job.id === update.id ? { ...job, state: update.state } : job,
          ),
        }
      : page,
  );
  void client.invalidateQueries({ queryKey: jobKeys.all(tenant) });
  void client.invalidateQueries({ queryKey: poolKeys.all });
}

/** Refetch everything a tenant topic feeds, after a sequence gap or a reconnect. */
export function resync(client: QueryClient, tenant: string): void {
  void client.invalidateQueries({ queryKey: jobKeys.all(tenant) });
  void client.invalidateQueries({ queryKey: poolKeys.all });
}

/** Keeps one websocket open while the shell is mounted, subscribed to the current tenant. */
export function useLiveEvents(tenant: string | null): void {
  const client = useQueryClient();
  useEffect(() => {
    if (tenant === null) {
      setConnection('idle');
      return undefined;
    }
    const topic = `tenant:${tenant}`;
    const stream = new EventStream({
      url: eventsUrl(),
      onEvent: (event) => {
        applyEvent(client, tenant, event);
      },
      onResync: () => {
        resync(client, tenant);
      },
      onStateChange: setConnection,
    });
    stream.setTopics([topic]);
    stream.start();
    return () => {
      stream.stop();
    };
  }, [client, tenant]);
}
