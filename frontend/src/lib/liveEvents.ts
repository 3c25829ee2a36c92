import type { QueryClient } from '@tanstack/react-query';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore } from 'react';
import type { Job, JobPage } from './apiTypes';
import { EventStream, eventsUrl, type ConnectionState, type ServerEvent } from './events';
import { healthKeys, jobKeys, poolKeys } from './queryKeys';

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

/** Which pools changed (allocations, queue, holds, nodes), from any tenant's work. */
export const POOLS_TOPIC = 'pools';
/** The least time between two refetches of one pool's queries. */
export const POOL_REFRESH_MS = 2_000;

function changedPools(event: ServerEvent): number[] {
  if (event.type !== 'pools.changed' || typeof event.data !== 'object' || event.data === null) {
    return [];
  }
  const ids = (event.data as { ids?: unknown }).ids;
  return Array.isArray(ids) ? ids.filter((id): id is number => typeof id === 'number') : [];
}

/**
 * Runs `fn` at once, then at most once per `gapMs`. A call inside the gap is not dropped: one
 * run follows at its end, so what `fn` refreshes always ends up current.
 */
class Throttle {
  private last = -Infinity;
  private waiting: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly fn: () => void,
    private readonly gapMs: number,
  ) {}

  call(): void {
    if (this.waiting !== null) return;
    const wait = this.last + this.gapMs - Date.now();
    if (wait <= 0) {
      this.run();
      return;
    }
    this.waiting = setTimeout(() => {
      this.waiting = null;
      this.run();
    }, wait);
  }

  stop(): void {
    if (this.waiting !== null) clearTimeout(this.waiting);
    this.waiting = null;
  }

  private run(): void {
    this.last = Date.now();
    this.fn();
  }
}

/**
 * Refetches a pool's queries when the server says it changed, at most once per `gapMs` per
 * pool: a busy cluster changes every scheduling cycle, and a refetch of a 10,000-GPU pool's
 * topology is not free.
 */
export class PoolRefresher {
  private readonly pools = new Map<number, Throttle>();

  constructor(
    private readonly client: QueryClient,
    private readonly gapMs = POOL_REFRESH_MS,
  ) {}

  receive(event: ServerEvent): void {
    for (const id of changedPools(event)) this.changed(id);
  }

  changed(id: number): void {
    let throttle = this.pools.get(id);
    if (throttle === undefined) {
      throttle = new Throttle(() => {
        void this.client.invalidateQueries({ queryKey: poolKeys.one(id) });
      }, this.gapMs);
      this.pools.set(id, throttle);
    }
    throttle.call();
  }

  stop(): void {
    this.pools.forEach((throttle) => {
      throttle.stop();
    });
  }
}

/**
 * Keeps one websocket open while the shell is mounted, subscribed to which pools changed and
 * to the current tenant, if any (a platform admin may have none).
 */
export function useLiveEvents(tenant: string | null): void {
  const client = useQueryClient();
  useEffect(() => {
    const pools = new PoolRefresher(client);
    // The Health pages (incidents, alerts, the node grid) span every pool: an incident or
    // alert that opens or closes is published as its node's pool changing.
    const refreshHealth = () => void client.invalidateQueries({ queryKey: healthKeys.all });
    const health = new Throttle(refreshHealth, POOL_REFRESH_MS);
    const stream = new EventStream({
      url: eventsUrl(),
      onEvent: (event) => {
        if (event.topic === POOLS_TOPIC) {
          pools.receive(event);
          if (event.type === 'pools.changed') health.call();
        } else if (tenant !== null) applyEvent(client, tenant, event);
      },
      onResync: (topic) => {
        if (topic === POOLS_TOPIC) {
          void client.invalidateQueries({ queryKey: poolKeys.all });
          refreshHealth();
        } else if (tenant !== null) resync(client, tenant);
      },
      onStateChange: setConnection,
    });
    stream.setTopics(tenant === null ? [POOLS_TOPIC] : [`tenant:${tenant}`, POOLS_TOPIC]);
    stream.start();
    return () => {
      stream.stop();
      pools.stop();
      health.stop();
    };
  }, [client, tenant]);
}
