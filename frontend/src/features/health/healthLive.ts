import { type QueryClient, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { EventStream, eventsUrl, type ServerEvent } from '../../lib/events';
import { POOL_REFRESH_MS, POOLS_TOPIC, useConnectionState } from '../../lib/liveEvents';

/** Every health query (grid, summary, node pages, incidents, alerts) lives under this key. */
export const HEALTH_KEY = ['health'] as const;

/**
 * Refetches the health queries when the server says a pool changed: an incident or alert of
 * its nodes opened or closed, or a node was cordoned, drained or made a spare
 * (`pools.changed`, docs/websockets.md). At most once per `gapMs`, with one more refetch at
 * the end of the gap when changes kept coming, so a busy cluster's scheduling cycles do not
 * refetch the page every second.
 */
export class HealthRefresher {
  private last = -Infinity;
  private waiting: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly client: QueryClient,
    private readonly gapMs = POOL_REFRESH_MS,
  ) {}

  receive(event: ServerEvent): void {
    if (event.type === 'pools.changed') this.changed();
  }

  changed(): void {
    if (this.waiting !== null) return;
    const wait = this.last + this.gapMs - Date.now();
    if (wait <= 0) {
      this.refresh();
      return;
    }
    this.waiting = setTimeout(() => {
      this.waiting = null;
      this.refresh();
    }, wait);
  }

  stop(): void {
    if (this.waiting !== null) clearTimeout(this.waiting);
    this.waiting = null;
  }

  refresh(): void {
    this.last = Date.now();
    void this.client.invalidateQueries({ queryKey: HEALTH_KEY });
  }
}

/**
 * While a Health page is open: its own subscription to the `pools` topic (the shell's stream
 * feeds the pool caches only), refetching the health queries on each change and after a
 * missed event or a reconnect.
 */
export function useHealthLive(): void {
  const client = useQueryClient();
  useEffect(() => {
    const refresher = new HealthRefresher(client);
    const stream = new EventStream({
      url: eventsUrl(),
      onEvent: (event) => {
        if (event.topic === POOLS_TOPIC) refresher.receive(event);
      },
      onResync: () => {
        refresher.refresh();
      },
    });
    stream.setTopics([POOLS_TOPIC]);
    stream.start();
    return () => {
      stream.stop();
      refresher.stop();
    };
  }, [client]);
}

/** Poll only as the fallback for a closed socket; events drive the page while it is open. */
export function useHealthPollInterval(): number {
  return useConnectionState() === 'open' ? 60_000 : 15_000;
}
